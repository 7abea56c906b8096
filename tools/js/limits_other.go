//go:build !linux

package js

import "syscall"

// jsLimitMemory has no reliable OS limit outside Linux: the worker relies on
// its heap check and runtime memory limit, and a crash still ends only the
// worker process, never the host.
func jsLimitMemory(uint64) error { return nil }

// jsWorkerProcAttr: without PR_SET_PDEATHSIG the worker notices the host's
// death by the end of its stdin.
func jsWorkerProcAttr() *syscall.SysProcAttr { return nil }
