//go:build !linux

package shell

import "time"

// BecomeSubreaper needs Linux (PR_SET_CHILD_SUBREAPER); elsewhere a process
// that escapes a bash_exec command's process group with setsid is out of
// reach once its parent exits.
func BecomeSubreaper() error { return nil }

// ProtectProcess needs Linux (PR_SET_DUMPABLE); elsewhere it does nothing.
func ProtectProcess() error { return nil }

// killStrays needs /proc and a subreaper: elsewhere only the process groups
// are ended.
func killStrays(map[int]bool, time.Duration) int { return 0 }

// killSessionTrees needs /proc: elsewhere the process groups are ended by
// the caller.
func killSessionTrees(map[int]bool) int { return 0 }
