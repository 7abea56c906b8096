//go:build !unix

package shell

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Guarded returns cmd unchanged: the guard needs a Unix system.
func Guarded(cmd *exec.Cmd, _ string) *exec.Cmd { return cmd }

// StopGroup has no process groups to end here.
func StopGroup(int, time.Duration) bool { return false }

// RunGuard needs a Unix system.
func RunGuard([]string) int {
	fmt.Fprintln(os.Stderr, "fido "+GuardCommand+" needs a Unix system")
	return 2
}
