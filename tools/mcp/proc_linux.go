//go:build linux

package mcp

import "syscall"

// setParentDeathSignal ends the server when the host dies without cleaning up.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
