//go:build !unix

package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/fido-nvim/fido/tools/sandbox"
)

// Guarded returns cmd unchanged: the guard needs a Unix system.
func Guarded(cmd *exec.Cmd, _ string) *exec.Cmd { return cmd }

// GuardedSandbox needs a Unix system.
func GuardedSandbox(*exec.Cmd, string, sandbox.Policy) (*exec.Cmd, error) {
	return nil, errors.New("the sandbox of a server needs a Unix system")
}

// StopGroup has no process groups to end here.
func StopGroup(int, time.Duration) bool { return false }

// RunGuard needs a Unix system.
func RunGuard([]string) int {
	fmt.Fprintln(os.Stderr, "fido "+GuardCommand+" needs a Unix system")
	return 2
}
