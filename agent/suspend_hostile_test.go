package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
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
	toolstest.WaitBounded(t, 5*time.Second, "/recall", done)
	assert.True(t, ui.has("notice /recall: skipped 2 unreadable snapshot(s)"))
	assert.True(t, ui.has("error /recall: no readable snapshot"))
}
