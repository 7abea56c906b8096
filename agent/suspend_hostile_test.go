package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A FIFO or a symlink to /dev/zero among the snapshots must not hang or
// exhaust /recall: it is skipped unread and named in the notice.
func TestRecallSkipsFIFOAndDevZeroSnapshots(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "20250101T000000Z-fifo.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "20250101T000001Z-zero.json")))
	s, ui := newTestSession(t, &scriptProvider{}, SessionConfig{SuspendDir: dir})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.command("/recall")
	}()
	waitBounded(t, 5*time.Second, "/recall", done)
	assert.True(t, ui.has("notice /recall: skipped 2 unreadable snapshot(s)"))
	assert.True(t, ui.has("error /recall: no readable snapshot"))
}

// waitBounded waits at most d for done, stopping the process if the heap
// grows past 512 MiB meanwhile (a runaway read cannot be interrupted).
func waitBounded(t *testing.T, d time.Duration, what string, done <-chan struct{}) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for {
		select {
		case <-done:
			return
		case <-deadline:
			t.Fatalf("%s did not return within %v", what, d)
		case <-tick.C:
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > 512<<20 {
				panic(what + ": heap grew past 512 MiB")
			}
		}
	}
}
