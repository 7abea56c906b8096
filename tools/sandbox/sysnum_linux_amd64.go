package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000 // __X32_SYSCALL_BIT
)

// refusedCalls fail with EPERM in every sandbox.
var refusedCalls = []uintptr{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
}

// observedCalls go to the supervisor.
var observedCalls = []uintptr{
	unix.SYS_OPEN, unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_CREAT,
	unix.SYS_MKDIR, unix.SYS_MKDIRAT, unix.SYS_MKNOD, unix.SYS_MKNODAT,
	unix.SYS_UNLINK, unix.SYS_UNLINKAT, unix.SYS_RMDIR,
	unix.SYS_RENAME, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2,
	unix.SYS_LINK, unix.SYS_LINKAT, unix.SYS_SYMLINK, unix.SYS_SYMLINKAT,
	unix.SYS_TRUNCATE, unix.SYS_EXECVE, unix.SYS_EXECVEAT,
	unix.SYS_CONNECT, unix.SYS_BIND,
}

// decodeLegacyCall lists the paths of the observed calls x86-64 keeps
// from before the *at family.
func decodeLegacyCall(n *seccompNotif) []fsOp {
	a := n.args
	switch uintptr(n.nr) {
	case unix.SYS_OPEN:
		return []fsOp{{kind: "open", dirfd: atFDCWD, addr: a[0], flags: uint64(uint32(a[1]))}}
	case unix.SYS_CREAT:
		return []fsOp{{kind: "open", dirfd: atFDCWD, addr: a[0], flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC}}
	case unix.SYS_MKDIR:
		return []fsOp{{kind: "mkdir", dirfd: atFDCWD, addr: a[0]}}
	case unix.SYS_MKNOD:
		return []fsOp{{kind: "mknod", dirfd: atFDCWD, addr: a[0], flags: uint64(uint32(a[1]))}}
	case unix.SYS_UNLINK:
		return []fsOp{{kind: "unlink", dirfd: atFDCWD, addr: a[0]}}
	case unix.SYS_RMDIR:
		return []fsOp{{kind: "rmdir", dirfd: atFDCWD, addr: a[0]}}
	case unix.SYS_RENAME:
		return []fsOp{{kind: "rename-from", dirfd: atFDCWD, addr: a[0]}, {kind: "rename-to", dirfd: atFDCWD, addr: a[1]}}
	case unix.SYS_LINK:
		return []fsOp{{kind: "link-from", dirfd: atFDCWD, addr: a[0]}, {kind: "link-to", dirfd: atFDCWD, addr: a[1]}}
	case unix.SYS_SYMLINK:
		return []fsOp{{kind: "symlink", dirfd: atFDCWD, addr: a[1]}}
	}
	return nil
}
