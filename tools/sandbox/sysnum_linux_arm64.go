package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
)

// refusedCalls fail with EPERM in every sandbox.
var refusedCalls = []uintptr{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
}

// observedCalls go to the supervisor.
var observedCalls = []uintptr{
	unix.SYS_OPENAT, unix.SYS_OPENAT2,
	unix.SYS_MKDIRAT, unix.SYS_MKNODAT, unix.SYS_UNLINKAT,
	unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2, unix.SYS_LINKAT, unix.SYS_SYMLINKAT,
	unix.SYS_TRUNCATE, unix.SYS_EXECVE, unix.SYS_EXECVEAT,
	unix.SYS_CONNECT, unix.SYS_BIND,
}

// decodeLegacyCall: arm64 has only the *at calls.
func decodeLegacyCall(*seccompNotif) []fsOp { return nil }
