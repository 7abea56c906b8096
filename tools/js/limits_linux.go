package js

import (
	"os"
	"syscall"
)

// jsLimitMemory caps the worker's data segment (RLIMIT_DATA: since Linux 4.7
// it counts every private writable mapping, which is where Go's heap lives;
// address space Go merely reserves is not counted). An allocation beyond it
// fails in mmap and ends the worker with Go's out-of-memory error. The worker
// also volunteers for the kernel's OOM killer before the editor and host.
func jsLimitMemory(bytes uint64) error {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: bytes, Max: bytes})
}

// jsWorkerProcAttr kills the worker when the host dies, whatever the way.
func jsWorkerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
