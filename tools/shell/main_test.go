package shell

import (
	"os"
	"testing"

	"github.com/fido-nvim/fido/tools/sandbox"
)

// testProtectEnv makes the test binary report ProtectProcess's effect.
const testProtectEnv = "FIDO_TEST_PROTECT"

func TestMain(m *testing.M) {
	// The test binary is the sandbox helper, as bin/fido is in the host.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.RunHelper(os.Args[2:]))
	}
	if os.Getenv(testProtectEnv) == "1" {
		os.Exit(protectedChild())
	}
	// As the host does: processes escaping bash_exec commands come back here.
	_ = BecomeSubreaper()
	os.Exit(m.Run())
}
