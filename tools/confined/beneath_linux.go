//go:build linux

package confined

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once the kernel (or a seccomp filter) refuses openat2.
var noOpenat2 atomic.Bool

// openBeneath opens name below the directory base in one openat2 call with
// RESOLVE_BENEATH: the kernel refuses any resolution ("..", a symlink,
// an absolute link) that would leave base. ok is false when openat2 cannot
// be used or the kernel asks for a retry; the caller then takes the os.Root
// path. A name leaving base is ErrOutside.
func openBeneath(base *os.File, name string, flags int) (f *os.File, err error, ok bool) {
	if noOpenat2.Load() {
		return nil, nil, false
	}
	rc, err := base.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	var fd int
	var oerr error
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat2(int(dfd), name, how)
			if oerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return nil, nil, false
	}
	switch {
	case oerr == nil:
		return os.NewFile(uintptr(fd), name), nil, true
	case errors.Is(oerr, unix.ENOSYS), errors.Is(oerr, unix.EPERM):
		noOpenat2.Store(true)
		return nil, nil, false
	case errors.Is(oerr, unix.EAGAIN):
		return nil, nil, false
	case errors.Is(oerr, unix.EXDEV):
		return nil, &os.PathError{Op: "open", Path: name, Err: ErrOutside}, true
	}
	return nil, &os.PathError{Op: "openat2", Path: name, Err: oerr}, true
}
