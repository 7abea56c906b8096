package toolstest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/workspace"
)

// WriteTree creates files (path -> content) under root; a path ending in /
// creates a directory.
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if p[len(p)-1] == '/' {
			require.NoError(t, os.MkdirAll(abs, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(abs), 0o755))
		require.NoError(t, os.WriteFile(abs, []byte(c), 0o644))
	}
}

// Editor is a tools.Editor that records what the tools ask of it.
type Editor struct {
	mu sync.Mutex
	// Unsaved marks the paths whose buffer has unsaved changes.
	Unsaved map[string]bool
	// FailWith, when set, is returned by every Modified call.
	FailWith error
	// Asked lists the paths Modified was asked about, in order.
	Asked []string
	// Reloaded lists the paths of every Reload call, in order.
	Reloaded [][]string
}

// Modified reports Unsaved[path] (and FailWith).
func (e *Editor) Modified(_ context.Context, path string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.Asked = append(e.Asked, path)
	return e.Unsaved[path], e.FailWith
}

// Reload records paths.
func (e *Editor) Reload(_ context.Context, paths []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.Reloaded = append(e.Reloaded, append([]string(nil), paths...))
}

// Workspace makes a workspace in a temp dir holding files, with a fake
// editor and an undo log in a separate state dir.
func Workspace(t testing.TB, files map[string]string) (*workspace.Workspace, *Editor) {
	t.Helper()
	root := t.TempDir()
	WriteTree(t, root, files)
	undo, err := workspace.OpenUndoLog(filepath.Join(t.TempDir(), "state", "undo.json"))
	require.NoError(t, err)
	ed := &Editor{Unsaved: map[string]bool{}}
	ws, err := workspace.New(root, ed, undo)
	require.NoError(t, err)
	return ws, ed
}

// ReadFile returns the content of the workspace file rel.
func ReadFile(t testing.TB, ws *workspace.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

// SymlinkFixture makes a workspace root (and a directory outside it) with
// symlinks pointing inside and outside, dangling ones and loops, for tests
// that must never reach outside.
func SymlinkFixture(t testing.TB) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	WriteTree(t, root, map[string]string{"src/a.go": "package a\n", "docs/": ""})
	WriteTree(t, outside, map[string]string{"secret.txt": "secret\n", "dir/": ""})
	links := map[string]string{
		"link-in-file":     "src/a.go",
		"link-in-dir":      "src",
		"src/up":           "..",
		"link-out-file":    filepath.Join(outside, "secret.txt"),
		"link-out-dir":     filepath.Join(outside, "dir"),
		"link-out-rel":     "../outside",
		"dangling-out":     filepath.Join(outside, "nope.txt"),
		"dangling-in":      "src/new.go",
		"chain":            "link-out-rel",
		"src/back-in":      "../docs",
		"loop-a":           "loop-b",
		"loop-b":           "loop-a",
		"docs/via-escape":  "../../outside/../ws/src",
		"docs/root-detour": filepath.Join(outside, "..", "ws", "src"),
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	return root, outside
}
