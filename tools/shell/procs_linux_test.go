package shell

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const prGetDumpable = 3

// protectedChild is what the test binary does with testProtectEnv set: mark
// itself non-dumpable and report the flag.
func protectedChild() int {
	if err := ProtectProcess(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	v, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	fmt.Printf("dumpable=%d\n", v)
	return 0
}

func TestProtectProcessMakesTheHostNonDumpable(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), testProtectEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "dumpable=0", strings.TrimSpace(string(out)))
}
