//go:build unix && !linux

package shell

import (
	"syscall"
	"time"
)

// Without /proc and a subreaper the guard ends its process group only;
// processes that left it are out of reach here.
func endOwnTree(time.Duration) int {
	_ = syscall.Kill(-syscall.Getpgrp(), syscall.SIGKILL)
	return 0
}

func reapExitedExcept(int) {}

// No parent-death signal here: the guard checks its parent every second.
func setParentGoneSignal(*syscall.SysProcAttr) {}
