//go:build unix

package confined

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// listable returns dir as a File whose ReadDir takes entry types from the
// listing: os.File.ReadDir lstats every entry of a directory opened through
// an os.Root (2.5x slower walks), so the descriptor is duplicated into a
// plain File named full. The confinement is in how dir was opened; the
// descriptor stays the same directory.
func listable(dir *os.File, full string) (*os.File, error) {
	defer dir.Close()
	rc, err := dir.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	if err := rc.Control(func(dfd uintptr) { fd, derr = dupCloexec(int(dfd)) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, &os.PathError{Op: "dup", Path: full, Err: derr}
	}
	return os.NewFile(uintptr(fd), full), nil
}

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
			fd, oerr = unix.Openat(int(dfd), name, openReadFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if oerr != unix.EINTR {
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

func dupCloexec(fd int) (int, error) {
	for {
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != unix.EINTR {
			return nfd, err
		}
	}
}

// ReadlinkChild reads the target of the symlink name in the open directory
// dir, relative to dir's descriptor.
func ReadlinkChild(dir *os.File, name string) (string, error) {
	rc, err := dir.SyscallConn()
	if err != nil {
		return "", err
	}
	var target string
	var rerr error
	if err := rc.Control(func(dfd uintptr) {
		buf := make([]byte, 256)
		for {
			n, err := unix.Readlinkat(int(dfd), name, buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				rerr = &os.PathError{Op: "readlinkat", Path: name, Err: err}
				return
			}
			if n < len(buf) {
				target = string(buf[:n])
				return
			}
			buf = make([]byte, 2*len(buf))
		}
	}); err != nil {
		return "", err
	}
	return target, rerr
}

// FirstHole returns the offset of the first hole of the regular file f of
// the given size, and whether there is one before its end (a sparse file:
// its holes read as NUL bytes, gigabytes of them for free). f's offset is
// back at 0 afterwards. Where the file system cannot tell, there is none.
func FirstHole(f *os.File, size int64) (int64, bool) {
	off, err := f.Seek(0, unix.SEEK_HOLE)
	if _, serr := f.Seek(0, io.SeekStart); serr != nil || err != nil {
		return 0, false
	}
	return off, off < size
}
