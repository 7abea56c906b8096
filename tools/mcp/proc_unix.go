//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the server in its own process group, so ending the host
// can end the server and every child it started.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// endGroup ends the server's process group.
func endGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
