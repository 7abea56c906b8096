package files

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// runConv invokes a tool as the main agent of a conversation that tracks files.
func runConv(t testing.TB, ws *workspace.Workspace, ft *tools.FileTracker, name string, args any) tools.Result {
	t.Helper()
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, Files: ft}, name, b)
}

func readArgs(path string) map[string]any { return map[string]any{"path": path} }

func ops(o ...op) map[string]any { return map[string]any{"operations": o} }

// The user's edit between the model's read and its write is never lost: the
// whole-file overwrite and the search/replace are refused, the file keeps the
// user's bytes, and the model is told to read it again.
func TestGuardRefusesChangeSinceRead(t *testing.T) {
	for _, tt := range []struct {
		name string
		op   op
	}{
		{"overwrite", op{"path": "a.txt", "content": "model's version\n"}},
		{"search/replace", op{"path": "a.txt", "search": "one", "replace": "ONE"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "one\ntwo\n"})
			ft := tools.NewFileTracker(nil)
			res := runConv(t, ws, ft, "read_file", readArgs("a.txt"))
			require.False(t, res.IsError, res.Content)
			user := []byte("one\ntwo\nthe user's line\r\n")
			require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "a.txt"), user, 0o644))

			res = runConv(t, ws, ft, "patch", ops(tt.op))
			require.True(t, res.IsError)
			assert.Contains(t, res.Content, "a.txt changed on disk since you last read it")
			assert.Contains(t, res.Content, "Read a.txt again with read_file")
			assert.Equal(t, string(user), toolstest.ReadFile(t, ws, "a.txt"), "the user's edit is on disk byte for byte")
			assert.Empty(t, ws.Undo.Entries())

			// Reading again makes the same change possible.
			require.False(t, runConv(t, ws, ft, "read_file", readArgs("a.txt")).IsError)
			res = runConv(t, ws, ft, "patch", ops(tt.op))
			require.False(t, res.IsError, res.Content)
		})
	}
}

// Partial reads count as reads, and the operations before a refused one keep
// their result.
func TestGuardPartialReadAndPartialProgress(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "1\n2\n3\n4\n", "b.txt": "b\n"})
	ft := tools.NewFileTracker(nil)
	require.False(t, runConv(t, ws, ft, "read_file", map[string]any{"path": "a.txt", "seek": 2, "limit": 1}).IsError)
	require.False(t, runConv(t, ws, ft, "read_file", readArgs("b.txt")).IsError)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "b.txt"), []byte("user\n"), 0o644))
	res := runConv(t, ws, ft, "patch", ops(
		op{"path": "a.txt", "content": "new a\n"},
		op{"path": "b.txt", "content": "new b\n"},
	))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "op 1 ✓ a.txt")
	assert.Contains(t, res.Content, "op 2 ✗ b.txt: b.txt changed on disk")
	assert.Equal(t, "new a\n", toolstest.ReadFile(t, ws, "a.txt"))
	assert.Equal(t, "user\n", toolstest.ReadFile(t, ws, "b.txt"))
}

// Overwriting an existing file needs a read first; search/replace does not
// (the search text is the evidence); creating a file needs nothing.
func TestGuardNeverReadFile(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "keep me\n"})
	ft := tools.NewFileTracker(nil)
	res := runConv(t, ws, ft, "patch", ops(op{"path": "a.txt", "content": "clobbered\n"}))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "read it before overwriting it")
	assert.Equal(t, "keep me\n", toolstest.ReadFile(t, ws, "a.txt"))

	res = runConv(t, ws, ft, "patch", ops(op{"path": "a.txt", "search": "keep", "replace": "kept"}))
	require.False(t, res.IsError, res.Content)
	res = runConv(t, ws, ft, "patch", ops(op{"path": "new.txt", "content": "fresh\n"}))
	require.False(t, res.IsError, res.Content)
	// Fido's own writes count as seen: overwriting both now works.
	res = runConv(t, ws, ft, "patch", ops(op{"path": "a.txt", "content": "x\n"}, op{"path": "new.txt", "content": "y\n"}))
	require.False(t, res.IsError, res.Content)
}

// read → patch → patch by the model alone: Fido's own writes update what it saw.
func TestGuardOwnWritesUpdateSeen(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "v1\n"})
	ft := tools.NewFileTracker(nil)
	require.False(t, runConv(t, ws, ft, "read_file", readArgs("a.txt")).IsError)
	require.False(t, runConv(t, ws, ft, "patch", ops(op{"path": "a.txt", "search": "v1", "replace": "v2"})).IsError)
	res := runConv(t, ws, ft, "patch", ops(op{"path": "a.txt", "content": "v3\n"}, op{"path": "a.txt", "search": "v3", "replace": "v4"}))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "v4\n", toolstest.ReadFile(t, ws, "a.txt"))
	h, ok := ft.Seen("a.txt")
	require.True(t, ok)
	assert.Equal(t, workspace.ContentHash([]byte("v4\n")), h)
}

// rm and rmdir refuse a file changed since the model saw it; unseen files
// may be deleted as before.
func TestGuardRmAndRmdir(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "a\n", "d/x.txt": "x\n", "d/y.txt": "y\n", "other.txt": "o\n"})
	ft := tools.NewFileTracker(nil)
	require.False(t, runConv(t, ws, ft, "read_file", readArgs("a.txt")).IsError)
	require.False(t, runConv(t, ws, ft, "read_file", readArgs("d/y.txt")).IsError)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "a.txt"), []byte("edited\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "d/y.txt"), []byte("edited\n"), 0o644))

	res := runConv(t, ws, ft, "rm", readArgs("a.txt"))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "a.txt changed on disk")
	assert.Equal(t, "edited\n", toolstest.ReadFile(t, ws, "a.txt"))
	res = runConv(t, ws, ft, "rmdir", readArgs("d"))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "d/y.txt changed on disk")
	assert.Equal(t, "x\n", toolstest.ReadFile(t, ws, "d/x.txt"), "nothing under d was deleted")

	require.False(t, runConv(t, ws, ft, "rm", readArgs("other.txt")).IsError, "never-read files may be deleted")
	require.False(t, runConv(t, ws, ft, "read_file", readArgs("d/y.txt")).IsError)
	require.False(t, runConv(t, ws, ft, "rmdir", readArgs("d")).IsError)
	_, ok := ft.Seen("d/y.txt")
	assert.False(t, ok, "a deleted file is forgotten")
}
