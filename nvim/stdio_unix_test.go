//go:build unix

package nvim

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Neovim's jobstart hands the host a socket: reading it through the poller
// (deadlines work only there) still delivers the bytes and the EOF that
// tells the host Neovim is gone.
func TestPollableSocketIsReadThroughThePoller(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	blocking := os.NewFile(uintptr(fds[0]), "stdin")
	peer := os.NewFile(uintptr(fds[1]), "peer")
	defer blocking.Close()
	require.ErrorIs(t, blocking.SetReadDeadline(time.Time{}), os.ErrNoDeadline, "precondition: a blocking descriptor")

	in := pollable(blocking)
	require.NotSame(t, blocking, in)
	defer in.Close()
	assert.NoError(t, in.SetReadDeadline(time.Now().Add(time.Minute)), "the poller serves it")

	_, err = peer.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, peer.Close())
	got, err := io.ReadAll(in)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
}

// A regular file (stdin redirected from one) stays as it was.
func TestPollableLeavesRegularFiles(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	require.NoError(t, err)
	defer f.Close()
	assert.Same(t, f, pollable(f))
}
