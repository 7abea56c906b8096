package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

func TestRevertLastUndoesEachKindOfChange(t *testing.T) {
	ctx := context.Background()
	ws, ed := toolstest.Workspace(t, map[string]string{"a.go": "package a\n\nvar x = 1\n", "old.txt": "keep me\n", "bin.dat": "\x00\x01\xff"})
	require.NoError(t, os.Chmod(filepath.Join(ws.Root, "a.go"), 0o600))
	steps := []struct {
		name string
		args any
		tool string
	}{
		{"edit", map[string]any{"operations": []op{{"path": "a.go", "search": "x = 1", "replace": "x = 2"}}}, "patch"},
		{"create", map[string]any{"operations": []op{{"path": "new/b.go", "content": "package b\n"}}}, "patch"},
		{"overwrite", map[string]any{"operations": []op{{"path": "bin.dat", "content": "text now"}}}, "patch"},
		{"rm", map[string]any{"path": "old.txt"}, "rm"},
		{"mkdir", map[string]any{"path": "d1/d2"}, "mkdir"},
	}
	for _, s := range steps {
		res := run(t, ws, s.tool, s.args)
		require.False(t, res.IsError, "%s: %s", s.name, res.Content)
	}
	want := []struct{ desc, check string }{
		{"removed the empty directory d1/", "d1"},
		{"restored old.txt, which rm had deleted", "old.txt"},
		{"restored bin.dat as it was before the overwrite", "bin.dat"},
		{"removed new/b.go, which patch had created", "new/b.go"},
		{"restored a.go as it was before the edit", "a.go"},
	}
	for _, w := range want {
		desc, err := ws.RevertLast(ctx)
		require.NoError(t, err)
		assert.Equal(t, w.desc, desc)
	}
	assert.Equal(t, "package a\n\nvar x = 1\n", toolstest.ReadFile(t, ws, "a.go"))
	fi, err := os.Stat(filepath.Join(ws.Root, "a.go"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode restored")
	assert.Equal(t, "keep me\n", toolstest.ReadFile(t, ws, "old.txt"))
	assert.Equal(t, "\x00\x01\xff", toolstest.ReadFile(t, ws, "bin.dat"), "binary prior content (base64 in the log)")
	for _, gone := range []string{"new/b.go", "d1"} {
		_, err := os.Stat(filepath.Join(ws.Root, gone))
		assert.True(t, os.IsNotExist(err), gone)
	}
	assert.Empty(t, ws.Undo.Entries(), "reverted entries leave the log")
	assert.NotEmpty(t, ed.Reloaded)
	_, err = ws.RevertLast(ctx)
	assert.ErrorContains(t, err, "the undo log is empty")
}

func TestRevertRefusesWhenUnsafe(t *testing.T) {
	ctx := context.Background()
	ws, ed := toolstest.Workspace(t, map[string]string{"a.txt": "one\n", "dir/f.txt": "x\n"})
	res := run(t, ws, "patch", map[string]any{"operations": []op{{"path": "a.txt", "search": "one", "replace": "two"}}})
	require.False(t, res.IsError)

	// Changed again after Fido wrote it: refused, nothing touched.
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "a.txt"), []byte("three\n"), 0o644))
	_, err := ws.RevertLast(ctx)
	assert.ErrorContains(t, err, "changed after Fido wrote it")
	assert.Equal(t, "three\n", toolstest.ReadFile(t, ws, "a.txt"))
	assert.Len(t, ws.Undo.Entries(), 1, "the entry stays")

	// Unsaved buffer: refused.
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "a.txt"), []byte("two\n"), 0o644))
	ed.Unsaved[filepath.Join(ws.Root, "a.txt")] = true
	_, err = ws.RevertLast(ctx)
	assert.ErrorContains(t, err, "unsaved changes")
	ed.Unsaved[filepath.Join(ws.Root, "a.txt")] = false
	_, err = ws.RevertLast(ctx)
	require.NoError(t, err)
	assert.Equal(t, "one\n", toolstest.ReadFile(t, ws, "a.txt"))

	// rmdir cannot be reverted.
	res = run(t, ws, "rmdir", map[string]any{"path": "dir"})
	require.False(t, res.IsError, res.Content)
	_, err = ws.RevertLast(ctx)
	assert.ErrorContains(t, err, "were not kept")

	// mkdir whose directory got a file: refused.
	ws2, _ := toolstest.Workspace(t, nil)
	require.False(t, run(t, ws2, "mkdir", map[string]any{"path": "made"}).IsError)
	require.NoError(t, os.WriteFile(filepath.Join(ws2.Root, "made", "user.txt"), []byte("mine"), 0o644))
	_, err = ws2.RevertLast(ctx)
	assert.ErrorContains(t, err, "not empty")
	assert.Equal(t, "mine", toolstest.ReadFile(t, ws2, "made/user.txt"))

	// A file recreated where rm deleted one: refused.
	ws3, _ := toolstest.Workspace(t, map[string]string{"x.txt": "old"})
	require.False(t, run(t, ws3, "rm", map[string]any{"path": "x.txt"}).IsError)
	require.NoError(t, os.WriteFile(filepath.Join(ws3.Root, "x.txt"), []byte("new"), 0o644))
	_, err = ws3.RevertLast(ctx)
	assert.ErrorContains(t, err, "exists at that path again")
	assert.Equal(t, "new", toolstest.ReadFile(t, ws3, "x.txt"))
}

func TestRevertOfAnEntryLeftPending(t *testing.T) {
	ctx := context.Background()
	ws, _ := toolstest.Workspace(t, map[string]string{"a.go": "before\n"})
	abs := filepath.Join(ws.Root, "a.go")

	// Crash after recording, before writing: nothing to revert.
	e := workspace.UndoEntry{Tool: "patch", Op: "overwrite", Path: "a.go", After: workspace.ContentHash([]byte("after\n"))}
	ws.RecordPrior(&e, abs)
	require.NoError(t, ws.Undo.Begin(&e))
	require.True(t, ws.Undo.Entries()[0].Pending)
	desc, err := ws.RevertLast(ctx)
	require.NoError(t, err)
	assert.Contains(t, desc, "nothing to revert: Fido stopped before its overwrite of a.go was made")
	assert.Empty(t, ws.Undo.Entries())

	// Crash after writing, before confirming: a real revert.
	e = workspace.UndoEntry{Tool: "patch", Op: "overwrite", Path: "a.go", After: workspace.ContentHash([]byte("after\n"))}
	ws.RecordPrior(&e, abs)
	require.NoError(t, ws.Undo.Begin(&e))
	require.NoError(t, workspace.WriteFileAtomic(abs, []byte("after\n"), 0o644))
	desc, err = ws.RevertLast(ctx)
	require.NoError(t, err)
	assert.Contains(t, desc, "restored a.go")
	got, _ := os.ReadFile(abs)
	assert.Equal(t, "before\n", string(got))

	// Changed by someone else since: refused, honestly.
	e = workspace.UndoEntry{Tool: "patch", Op: "overwrite", Path: "a.go", After: workspace.ContentHash([]byte("after\n"))}
	ws.RecordPrior(&e, abs)
	require.NoError(t, ws.Undo.Begin(&e))
	require.NoError(t, os.WriteFile(abs, []byte("someone else\n"), 0o644))
	_, err = ws.RevertLast(ctx)
	require.ErrorContains(t, err, "the file was changed after Fido wrote it")
	got, _ = os.ReadFile(abs)
	assert.Equal(t, "someone else\n", string(got))
}
