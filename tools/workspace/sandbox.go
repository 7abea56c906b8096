package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/fido-nvim/fido/tools/confined"
)

// maxSymlinkHops bounds symlink expansion while resolving one path (the
// kernel's own limit is 40).
const maxSymlinkHops = 40

// Sandbox maps workspace-relative paths to absolute paths that are
// guaranteed to lie inside the workspace root. It rejects absolute paths,
// lexical traversal (`..` leaving the root) and symlinks whose target
// resolves outside the root, for existing paths and for paths that do not
// exist yet (the deepest existing ancestor decides). Symlinks that stay
// inside the root are allowed.
//
// Resolve names a file; it does not make using that name safe, because a
// path component can be swapped for a symlink between the check and the use.
// So every file operation goes through the Sandbox's methods (Open, Stat,
// WriteFileAtomic, Remove, …), which take the absolute path Resolve returned
// and act through an os.Root opened on the workspace: the kernel resolves
// one component at a time below that open directory and never leaves it.
type Sandbox struct {
	root string   // absolute, symlinks resolved, cleaned
	fsys *os.Root // the workspace, opened once
	base *os.File // the same directory as a File, for confined.OpenDirBeneath

	// Logf, when set, receives one line per file Fido skipped on its own
	// accord (an ignore file that is a FIFO, too large, or a symlink leading
	// out of the workspace). Each file is logged once.
	Logf   func(format string, args ...any)
	logged sync.Map
}

// NewSandbox makes a sandbox rooted at root, which must be an existing directory.
func NewSandbox(root string) (*Sandbox, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %q is not a directory", root)
	}
	real = filepath.Clean(real)
	fsys, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	base, err := confined.OpenBase(fsys)
	if err != nil {
		_ = fsys.Close()
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	return &Sandbox{root: real, fsys: fsys, base: base}, nil
}

// Root is the absolute workspace root with symlinks resolved.
func (s *Sandbox) Root() string { return s.root }

// FS is the workspace opened as an os.Root: names resolve inside it only.
func (s *Sandbox) FS() *os.Root { return s.fsys }

// Clean checks rel lexically and returns it cleaned and slash-separated
// ("." for the root). It rejects empty strings only when allowRoot is false.
func (s *Sandbox) Clean(rel string) (string, error) {
	if strings.IndexByte(rel, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) {
		return "", fmt.Errorf("path %q is absolute; use a path relative to the workspace root", rel)
	}
	c := filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q leaves the workspace", rel)
	}
	return c, nil
}

// Resolve returns the absolute path for a workspace-relative path, following
// every symlink on the way, and fails if the result would lie outside the
// workspace. "" and "." mean the root.
func (s *Sandbox) Resolve(rel string) (string, error) {
	c, err := s.Clean(rel)
	if err != nil {
		return "", err
	}
	abs, err := s.follow(s.root, splitSlash(c))
	if err != nil {
		return "", fmt.Errorf("path %q: %w", rel, err)
	}
	if !s.Contains(abs) {
		return "", fmt.Errorf("path %q resolves outside the workspace through a symlink", rel)
	}
	return abs, nil
}

// ResolveNoFollow is Resolve for operations on a directory entry itself
// (rm, rmdir): every parent directory is resolved and checked, but a final
// symlink is not followed, so removing a link removes the link, not its target.
func (s *Sandbox) ResolveNoFollow(rel string) (string, error) {
	c, err := s.Clean(rel)
	if err != nil {
		return "", err
	}
	if c == "." {
		return s.root, nil
	}
	dir, base := pathSplit(c)
	parent, err := s.Resolve(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, base), nil
}

// Contains reports whether abs (absolute, cleaned) is the root or lies under it.
func (s *Sandbox) Contains(abs string) bool {
	return abs == s.root || strings.HasPrefix(abs, s.root+string(filepath.Separator)) ||
		(s.root == string(filepath.Separator) && strings.HasPrefix(abs, s.root))
}

// Rel turns an absolute path inside the workspace into a slash-separated
// workspace-relative path ("." for the root).
func (s *Sandbox) Rel(abs string) string {
	r, err := filepath.Rel(s.root, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// follow walks comps from base, expanding symlinks the way the kernel would.
// Once a component does not exist, the rest is appended lexically: nothing
// below a missing entry can be a symlink.
func (s *Sandbox) follow(base string, comps []string) (string, error) {
	cur := base
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{next}, comps...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		comps = append(splitSlash(filepath.ToSlash(target)), comps...)
	}
	return cur, nil
}

// name turns an absolute path inside the workspace (what Resolve returns)
// into the slash-separated name the os.Root takes ("." for the root).
func (s *Sandbox) name(abs string) (string, error) {
	if !s.Contains(abs) {
		return "", &fs.PathError{Op: "open", Path: abs, Err: confined.ErrOutside}
	}
	return s.Rel(abs), nil
}

// Open opens the file at abs for reading without blocking (a FIFO or device
// never stalls the call) and returns it with its Fstat info; the caller
// checks the type before reading.
func (s *Sandbox) Open(abs string) (*os.File, fs.FileInfo, error) {
	n, err := s.name(abs)
	if err != nil {
		return nil, nil, err
	}
	return confined.Open(s.fsys, n)
}

// OpenDir opens the directory at abs for listing.
func (s *Sandbox) OpenDir(abs string) (*os.File, error) {
	n, err := s.name(abs)
	if err != nil {
		return nil, err
	}
	return confined.OpenDirBeneath(s.base, s.fsys, n)
}

// ReadFile reads the regular file at abs, at most limit bytes.
func (s *Sandbox) ReadFile(abs string, limit int64) ([]byte, error) {
	n, err := s.name(abs)
	if err != nil {
		return nil, err
	}
	return confined.ReadFile(s.fsys, n, limit)
}

// Stat is os.Stat inside the workspace (a final symlink is followed, but
// only inside).
func (s *Sandbox) Stat(abs string) (fs.FileInfo, error) {
	n, err := s.name(abs)
	if err != nil {
		return nil, err
	}
	return s.fsys.Stat(n)
}

// Lstat is os.Lstat inside the workspace.
func (s *Sandbox) Lstat(abs string) (fs.FileInfo, error) {
	n, err := s.name(abs)
	if err != nil {
		return nil, err
	}
	return s.fsys.Lstat(n)
}

// Readlink is os.Readlink inside the workspace.
func (s *Sandbox) Readlink(abs string) (string, error) {
	n, err := s.name(abs)
	if err != nil {
		return "", err
	}
	return s.fsys.Readlink(n)
}

// Remove removes the file, link or empty directory at abs (a final symlink
// is removed, not followed).
func (s *Sandbox) Remove(abs string) error {
	n, err := s.name(abs)
	if err != nil {
		return err
	}
	if n == "." {
		return errors.New("refusing to remove the workspace root")
	}
	return s.fsys.Remove(n)
}

// RemoveAll removes abs and everything below it, never following a symlink.
func (s *Sandbox) RemoveAll(abs string) error {
	n, err := s.name(abs)
	if err != nil {
		return err
	}
	if n == "." {
		return errors.New("refusing to remove the workspace root")
	}
	return s.fsys.RemoveAll(n)
}

// WalkDir is filepath.WalkDir of the tree at abs (lexical order, symlinks
// not followed, fs.SkipDir and fs.SkipAll honoured), with every directory
// opened through OpenDir: inside the workspace and never blocking on a FIFO
// swapped in for a directory. Paths given to fn are absolute.
func (s *Sandbox) WalkDir(abs string, fn fs.WalkDirFunc) error {
	fi, err := s.Lstat(abs)
	if err != nil {
		err = fn(abs, nil, err)
	} else {
		err = s.walkDir(abs, fs.FileInfoToDirEntry(fi), fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

func (s *Sandbox) walkDir(abs string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(abs, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	f, err := s.OpenDir(abs)
	var ents []fs.DirEntry
	if err == nil {
		ents, err = f.ReadDir(-1)
		_ = f.Close()
	}
	if err != nil {
		if err = fn(abs, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return err
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if err := s.walkDir(filepath.Join(abs, e.Name()), e, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// WriteFileAtomic replaces the file at abs with data (temp file, fsync,
// rename; see confined.WriteFileAtomic) inside the workspace. A final symlink
// is replaced, so callers pass a path Resolve returned (links followed).
func (s *Sandbox) WriteFileAtomic(abs string, data []byte, perm fs.FileMode) error {
	n, err := s.name(abs)
	if err != nil {
		return err
	}
	return confined.WriteFileAtomic(s.fsys, n, data, perm)
}

// maxPathLen bounds the absolute length of a directory mkdir creates:
// os.Root creates one component at a time, so the kernel's PATH_MAX would not
// stop a path that git, editors and shells could no longer use.
const maxPathLen = 4095

// MkdirAll creates the directory abs with its missing parents inside the
// workspace and returns the topmost directory it created ("" when abs
// already was a directory). When it fails part way it removes what it
// created (empty directories only), so a failed call leaves nothing behind.
func (s *Sandbox) MkdirAll(abs string, perm fs.FileMode) (top string, err error) {
	n, err := s.name(abs)
	if err != nil {
		return "", err
	}
	if len(abs) > maxPathLen {
		return "", &fs.PathError{Op: "mkdir", Path: abs, Err: fmt.Errorf("path is too long (%d bytes; at most %d)", len(abs), maxPathLen)}
	}
	if n == "." {
		return "", nil
	}
	var created []string
	defer func() {
		if err != nil {
			for i := len(created) - 1; i >= 0; i-- {
				_ = s.fsys.Remove(created[i])
			}
		}
	}()
	parts := strings.Split(n, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		err := s.fsys.Mkdir(p, perm)
		if err == nil {
			created = append(created, p)
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if fi, serr := s.fsys.Stat(p); serr != nil {
			return "", serr
		} else if !fi.IsDir() {
			return "", &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
		}
	}
	if len(created) == 0 {
		return "", nil
	}
	return filepath.Join(s.root, filepath.FromSlash(created[0])), nil
}

// ReadOwnFile reads the workspace file name (workspace-relative, slash
// separated) that Fido reads on its own accord, not because a tool call
// asked: ignore files, instruction files such as AGENTS.md. It is
// confined.ReadFile on the workspace: a regular file inside the workspace,
// opened without blocking, at most limit bytes. A missing file is an
// fs.ErrNotExist error; any other failure is also logged once (Logf).
func (s *Sandbox) ReadOwnFile(name string, limit int64) ([]byte, error) {
	data, err := confined.ReadFile(s.fsys, name, limit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		s.LogSkip(name, err)
	}
	return data, err
}

// LogSkip logs, once per file, that Fido skipped a file it reads on its own.
func (s *Sandbox) LogSkip(name string, err error) {
	if s.Logf == nil {
		return
	}
	if _, dup := s.logged.LoadOrStore(name, true); dup {
		return
	}
	s.Logf("skipped %s: %v", name, err)
}

func splitSlash(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// pathSplit splits a cleaned slash path into its directory and last element.
func pathSplit(p string) (dir, base string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ".", p
	}
	return p[:i], p[i+1:]
}
