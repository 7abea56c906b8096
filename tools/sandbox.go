package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
type Sandbox struct {
	root string // absolute, symlinks resolved, cleaned
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
	return &Sandbox{root: filepath.Clean(real)}, nil
}

// Root is the absolute workspace root with symlinks resolved.
func (s *Sandbox) Root() string { return s.root }

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
