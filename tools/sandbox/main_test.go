package sandbox

import (
	"os"
	"testing"
)

// The test binary is the helper: Command re-executes os.Executable() as
// `<exe> sandbox-exec`, exactly as the host re-executes bin/fido.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperCommand {
		os.Exit(RunHelper(os.Args[2:]))
	}
	os.Exit(m.Run())
}
