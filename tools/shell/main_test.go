package shell

import (
	"os"
	"testing"
)

// testProtectEnv makes the test binary report ProtectProcess's effect.
const testProtectEnv = "FIDO_TEST_PROTECT"

func TestMain(m *testing.M) {
	if os.Getenv(testProtectEnv) == "1" {
		os.Exit(protectedChild())
	}
	// As the host does: processes escaping bash_exec commands come back here.
	_ = BecomeSubreaper()
	os.Exit(m.Run())
}
