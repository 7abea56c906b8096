package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeTree creates files (path -> content) under root; a path ending in /
// creates a directory.
func writeTree(t testing.TB, root string, files map[string]string) {
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

// fakeEditor records what the tools ask of the editor.
type fakeEditor struct {
	mu       sync.Mutex
	modified map[string]bool
	failWith error
	asked    []string
	reloaded [][]string
}

func (f *fakeEditor) Modified(_ context.Context, path string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, path)
	return f.modified[path], f.failWith
}

func (f *fakeEditor) Reload(_ context.Context, paths []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reloaded = append(f.reloaded, append([]string(nil), paths...))
}

// testWorkspace makes a workspace in a temp dir with files, a fake editor
// and an undo log in a separate state dir.
func testWorkspace(t testing.TB, files map[string]string) (*Workspace, *fakeEditor) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	undo, err := OpenUndoLog(filepath.Join(t.TempDir(), "state", "undo.json"))
	require.NoError(t, err)
	ed := &fakeEditor{modified: map[string]bool{}}
	ws, err := NewWorkspace(root, ed, undo)
	require.NoError(t, err)
	return ws, ed
}

// run invokes a tool through a registry, as the agent does.
func run(t testing.TB, ws *Workspace, name string, args any) Result {
	t.Helper()
	reg, err := NewRegistry(WorkspaceTools(ws)...)
	require.NoError(t, err)
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		require.NoError(t, err)
		raw = b
	}
	return reg.Invoke(context.Background(), Invocation{Identity: Identity{Role: RoleMain}}, name, raw)
}

func readFile(t testing.TB, ws *Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}
