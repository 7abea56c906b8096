//go:build unix

package confined

import (
	"os"
	"syscall"
)

const (
	// O_NONBLOCK: opening a FIFO without a writer (or a device that waits)
	// returns at once; O_NOCTTY: a terminal never becomes ours.
	openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	openDirFlags  = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_DIRECTORY
)

// OpenChild opens the entry name (one path element, as a directory listing
// gives it) of the open directory dir for reading, relative to dir's
// descriptor, without following a symlink and without blocking: what a walk
// uses, one system call per file, for files it found in dir.
func OpenChild(dir *os.File, name string) (*os.File, os.FileInfo, error) {
	rc, err := dir.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var fd int
	var oerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = syscall.Openat(int(dfd), name, openReadFlags|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			if oerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	if oerr != nil {
		return nil, nil, &os.PathError{Op: "openat", Path: name, Err: oerr}
	}
	f := os.NewFile(uintptr(fd), name)
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
