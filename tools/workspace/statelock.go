package workspace

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// StateLockTimeout is how long LockState waits for another Fido to release a
// state file before giving up with ErrStateLocked. The kernel releases the
// lock of a process that died, so only a live but stuck holder makes it expire.
var StateLockTimeout = 5 * time.Second

// ErrStateLocked is returned when a state file stays locked by another
// process for longer than the timeout.
var ErrStateLocked = errors.New("locked by another Fido")

// StateLock is an advisory, exclusive lock on a state file, held through a
// lock file beside it (<path>.lock). Every Fido process that reads, modifies
// and writes a shared state file (plan, undo log) does so while holding it,
// so two Neovims on one workspace never lose each other's updates. The lock
// is per open file, so it also excludes another StateLock of the same process.
type StateLock struct {
	f *os.File
}

// LockState takes the lock of the state file path, waiting at most timeout
// (StateLockTimeout when timeout <= 0).
func LockState(path string, timeout time.Duration) (*StateLock, error) {
	if timeout <= 0 {
		timeout = StateLockTimeout
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the lock file: %w", err)
	}
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		if ok {
			return &StateLock{f: f}, nil
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("%s stayed %w for %s", path, ErrStateLocked, timeout)
		}
		time.Sleep(wait)
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// Unlock releases the lock. It is safe to call more than once.
func (l *StateLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	_ = l.f.Close()
	l.f = nil
}

// WithStateLock runs fn while holding the lock of the state file path.
func WithStateLock(path string, fn func() error) error {
	l, err := LockState(path, 0)
	if err != nil {
		return err
	}
	defer l.Unlock()
	return fn()
}
