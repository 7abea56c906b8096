//go:build unix

package mcp

import (
	"os/exec"
	"time"

	"github.com/fido-nvim/fido/tools/shell"
)

// guardStop bounds how long ending a server waits for its guard to end the
// tree before the whole group is killed.
const guardStop = 300 * time.Millisecond

// ownGroup runs the server under the guard (guard: the fido executable; ""
// runs it directly in a process group of its own), so ending the host —
// even with SIGKILL — ends the server and every process it started.
func ownGroup(cmd *exec.Cmd, guard string) *exec.Cmd { return shell.Guarded(cmd, guard) }

// endGroup ends the server's whole tree: its guard ends it on SIGTERM, and
// the process group is killed after a short grace.
func endGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	shell.StopGroup(cmd.Process.Pid, guardStop)
}
