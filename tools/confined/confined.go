package confined

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Errors the functions here wrap in an *fs.PathError.
var (
	// ErrNotRegular: the name is a directory, FIFO, device or socket where a
	// regular file is needed.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the caller's cap.
	ErrTooLarge = errors.New("file too large")
	// ErrOutside: the name, through a symlink or "..", resolves outside the
	// tree. os.Root reports this with an unexported error; IsOutside
	// recognizes both.
	ErrOutside = errors.New("resolves outside its directory through a symlink")
)

// IsOutside reports whether err says a name resolved outside its tree.
func IsOutside(err error) bool {
	if errors.Is(err, ErrOutside) {
		return true
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// Open opens name inside root for reading without ever blocking on it: the
// open is non-blocking (a FIFO without a writer does not wait, a terminal
// never becomes the controlling one) and the file's type comes from Fstat of
// the opened descriptor, so nothing can be swapped in between. The caller
// decides which types it accepts; fi is never nil when err is nil.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return nil, nil, outsideError(err, "open", name)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenRegular is Open for a regular file only; anything else is closed
// unread and reported as ErrNotRegular.
func OpenRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, fi, err := Open(root, name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (it is %s)", ErrNotRegular, TypeName(fi.Mode()))}
	}
	return f, fi, nil
}

// ReadFile is how Fido reads a file it reads on its own, not because a tool
// call named it: ignore files, instruction files such as AGENTS.md, state
// files. name is resolved inside root; only a regular file of at most limit
// bytes is read (ErrNotRegular, ErrTooLarge otherwise). The size is checked
// before reading and again while reading, since the file can grow meanwhile.
func ReadFile(root *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := OpenRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes, at most %d are read", ErrTooLarge, fi.Size(), limit)}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return data, nil
}

// ReadPath is ReadFile for the file at path confined to the directory that
// holds it: the file itself must not be a symlink leading out of that
// directory. It is meant for state files (plan, undo log, snapshots).
func ReadPath(p string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := ReadFile(root, filepath.Base(p), limit)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = p
	}
	return data, err
}

// WriteFileAtomic writes data to name inside root through a temporary file
// beside it (.<base>.<random>.tmp): create exclusively, write, chmod, fsync,
// rename over name, fsync the directory. Readers see the old or the new
// content, never a mix, even after a crash. Every step resolves inside root,
// so a directory swapped for a symlink can never carry the write outside. A
// final symlink is replaced, not followed; resolve it first to write through it.
func WriteFileAtomic(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	name = filepath.ToSlash(name)
	dir, base := path.Split(name)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := dir + "." + base + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&fs.ModePerm)
	if err != nil {
		return outsideError(err, "create", name)
	}
	ok := false
	defer func() {
		if !ok {
			_ = root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		return outsideError(err, "rename", name)
	}
	ok = true
	if dir == "" {
		dir = "."
	}
	if d, err := root.OpenFile(dir, openDirFlags, 0); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// WritePath is WriteFileAtomic for the file at path, creating its directory
// when needed. It is meant for state files.
func WritePath(p string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return WriteFileAtomic(root, filepath.Base(p), data, perm)
}

// OpenDir opens the directory name inside root for listing; a FIFO or
// device swapped in for it fails at once instead of blocking.
func OpenDir(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, openDirFlags, 0)
	if err != nil {
		return nil, outsideError(err, "open", name)
	}
	return listable(f, path.Join(root.Name(), name))
}

// OpenDirBeneath is OpenDir for a walk that opens many directories: base is
// root's directory opened as a File (OpenBase), and on Linux one
// openat2(RESOLVE_BENEATH) call resolves name below it, confined by the
// kernel, instead of one openat per path component. Elsewhere, or where
// openat2 is refused, it is OpenDir.
func OpenDirBeneath(base *os.File, root *os.Root, name string) (*os.File, error) {
	if f, err, ok := openBeneath(base, name, openDirFlags); ok {
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return OpenDir(root, name)
}

// OpenBase opens root's own directory as a File, for OpenDirBeneath.
func OpenBase(root *os.Root) (*os.File, error) {
	return root.OpenFile(".", openDirFlags, 0)
}

// Reader wraps r so that every Read first checks ctx: a long read (a huge
// or sparse file) stops within one buffer once ctx is cancelled.
func Reader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// outsideError replaces os.Root's "path escapes from parent" with ErrOutside.
func outsideError(err error, op, name string) error {
	if IsOutside(err) && !errors.Is(err, ErrOutside) {
		return &fs.PathError{Op: op, Path: name, Err: ErrOutside}
	}
	return err
}

// TypeName words the type of a file that is not a regular file ("a FIFO",
// "a character device", …) for messages.
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return strings.TrimSpace("an irregular file " + m.Type().String())
}
