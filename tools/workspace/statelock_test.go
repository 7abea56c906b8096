package workspace

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateLockExcludesAndTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	held, err := LockState(path, time.Second)
	require.NoError(t, err)

	start := time.Now()
	_, err = LockState(path, 100*time.Millisecond)
	require.ErrorIs(t, err, ErrStateLocked, "a stuck holder never hangs Fido")
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Contains(t, err.Error(), "plan.json stayed locked by another Fido for 100ms")

	held.Unlock()
	held.Unlock() // twice is harmless
	again, err := LockState(path, 100*time.Millisecond)
	require.NoError(t, err)
	again.Unlock()
	assert.FileExists(t, path+".lock")
}

func TestWithStateLockSerializes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "undo.json")
	var wg sync.WaitGroup
	inside, most := 0, 0
	var mu sync.Mutex
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, WithStateLock(path, func() error {
				mu.Lock()
				inside++
				most = max(most, inside)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				inside--
				mu.Unlock()
				return nil
			}))
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, most, "never two holders at once")
}
