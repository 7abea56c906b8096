//go:build unix

package nvim

import (
	"os"
	"runtime"
	"syscall"
)

// RPCStdin is standard input for the RPC stream, read through the Go
// runtime's poller when it is a socket (what Neovim's jobstart gives the
// host) or, on Linux, a pipe. A blocking read would park a thread in the
// kernel with its scheduler slot for as long as Neovim is quiet, and that
// keeps the runtime's monitor thread waking every 20 µs to 10 ms while Fido
// streams: two thirds of the host's context switches at 190 deltas/s.
func RPCStdin() *os.File { return pollable(os.Stdin) }

// pollable returns a File on a duplicate of f's descriptor that waits in the
// poller, or f when the descriptor is of a kind the poller cannot serve. The
// two Files close independently; the non-blocking mode belongs to the open
// file, so f's reads would no longer block either (nothing reads os.Stdin
// but the RPC stream).
func pollable(f *os.File) *os.File {
	fd := int(f.Fd())
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return f
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFSOCK:
	case syscall.S_IFIFO:
		// kqueue does not report a FIFO's last writer closing (Go issue
		// 24164); epoll does.
		if runtime.GOOS != "linux" {
			return f
		}
	default:
		return f
	}
	syscall.ForkLock.RLock() // no child may inherit the duplicate
	dup, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return f
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return f
	}
	return os.NewFile(uintptr(dup), f.Name())
}
