//go:build unix

package conversation

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f without waiting: the
// process holding it owns the conversation until it closes the file (or
// dies, when the kernel releases it).
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrBusy
		}
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}
