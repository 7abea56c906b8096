//go:build unix

package confined

import (
	"context"
	"errors"
	"golang.org/x/sys/unix"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fixture(t *testing.T) (*os.Root, string, string) {
	t.Helper()
	base := t.TempDir()
	dir, out := filepath.Join(base, "in"), filepath.Join(base, "out")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub/a.txt"), []byte("abc"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "secret"), []byte("secret"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	require.NoError(t, os.Symlink(filepath.Join(out, "secret"), filepath.Join(dir, "abs-out")))
	require.NoError(t, os.Symlink("../out/secret", filepath.Join(dir, "rel-out")))
	require.NoError(t, os.Symlink("sub/a.txt", filepath.Join(dir, "in-link")))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = root.Close() })
	return root, dir, out
}

func TestReadFile(t *testing.T) {
	root, _, _ := fixture(t)
	b, err := ReadFile(root, "sub/a.txt", 3)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))
	b, err = ReadFile(root, "in-link", 10)
	require.NoError(t, err, "a symlink staying inside is followed")
	assert.Equal(t, "abc", string(b))

	for name, want := range map[string]error{
		"sub/a.txt":     ErrTooLarge, // limit 2 below
		"fifo":          ErrNotRegular,
		"sub":           ErrNotRegular,
		"zero":          ErrOutside,
		"abs-out":       ErrOutside,
		"rel-out":       ErrOutside,
		"../out/secret": ErrOutside,
		"missing":       fs.ErrNotExist,
	} {
		_, err := ReadFile(root, name, 2)
		assert.ErrorIs(t, err, want, name)
		var pe *fs.PathError
		assert.True(t, errors.As(err, &pe), name)
	}
	_, err = ReadFile(root, "fifo", 10)
	assert.ErrorContains(t, err, "not a regular file (it is a FIFO)")
}

func TestReadPath(t *testing.T) {
	_, dir, _ := fixture(t)
	b, err := ReadPath(filepath.Join(dir, "sub/a.txt"), 10)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))
	_, err = ReadPath(filepath.Join(dir, "abs-out"), 10)
	assert.ErrorIs(t, err, ErrOutside)
	assert.ErrorContains(t, err, filepath.Join(dir, "abs-out"), "errors name the full path")
	_, err = ReadPath(filepath.Join(dir, "nope"), 10)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestWriteFileAtomic(t *testing.T) {
	root, dir, out := fixture(t)
	require.NoError(t, WriteFileAtomic(root, "sub/new.txt", []byte("new"), 0o600))
	b, err := os.ReadFile(filepath.Join(dir, "sub/new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	fi, err := os.Stat(filepath.Join(dir, "sub/new.txt"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())

	// A final symlink is replaced, never written through.
	require.NoError(t, WriteFileAtomic(root, "abs-out", []byte("x"), 0o644))
	b, err = os.ReadFile(filepath.Join(out, "secret"))
	require.NoError(t, err)
	assert.Equal(t, "secret", string(b))
	// A directory symlink leading out refuses the write.
	require.NoError(t, os.Symlink(out, filepath.Join(dir, "outdir")))
	assert.ErrorIs(t, WriteFileAtomic(root, "outdir/x", []byte("x"), 0o644), ErrOutside)
	assert.NoFileExists(t, filepath.Join(out, "x"))
	ents, err := os.ReadDir(filepath.Join(dir, "sub"))
	require.NoError(t, err)
	for _, e := range ents {
		assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temp file left: %s", e.Name())
	}
}

func TestOpenChildNeverFollowsOrBlocks(t *testing.T) {
	_, dir, _ := fixture(t)
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	f, fi, err := OpenChild(d, "fifo")
	require.NoError(t, err, "a FIFO opens without waiting for a writer")
	assert.Equal(t, "a FIFO", TypeName(fi.Mode()))
	_ = f.Close()
	_, _, err = OpenChild(d, "in-link")
	assert.Error(t, err, "a symlink is not followed")
	_, _, err = OpenChild(d, "zero")
	assert.Error(t, err)
}

func TestReaderStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader(strings.Repeat("x", 100)))
	buf := make([]byte, 10)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 10, n)
	cancel()
	_, err = io.ReadAll(r)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestOpenDirBeneath(t *testing.T) {
	root, dir, out := fixture(t)
	require.NoError(t, os.Symlink(out, filepath.Join(dir, "outdir")))
	require.NoError(t, os.Symlink("sub", filepath.Join(dir, "subdir-link")))
	base, err := OpenBase(root)
	require.NoError(t, err)
	defer base.Close()
	for _, name := range []string{"sub", "subdir-link", "."} {
		f, err := OpenDirBeneath(base, root, name)
		require.NoError(t, err, name)
		ents, err := f.ReadDir(-1)
		require.NoError(t, err)
		assert.NotEmpty(t, ents)
		_ = f.Close()
	}
	for _, name := range []string{"outdir", "../out", "zero"} {
		_, err := OpenDirBeneath(base, root, name)
		assert.ErrorIs(t, err, ErrOutside, name)
	}
	_, err = OpenDirBeneath(base, root, "fifo")
	assert.Error(t, err, "a FIFO is not opened as a directory (and never blocks)")
}
