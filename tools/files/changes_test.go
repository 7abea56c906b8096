package files

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(string(rune('a' + i - 1)))
		b.WriteString("\n")
	}
	return b.String()
}

// A turn changes two places of a.txt and creates n.txt; the user then
// edits a.txt elsewhere. Reverting hunk 1 restores it and keeps hunk 2 and
// the user's edits; a hunk the user edited is refused, and so is the
// whole-file revert; the whole-file revert of the created file deletes it;
// every revert is in the undo log.
func TestChangedFilesAndReverts(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": numbered(20)})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	inv := tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, Conversation: "c1", Turn: 2}
	args, _ := json.Marshal(ops(
		op{"path": "a.txt", "search": "line b\n", "replace": "LINE B\nextra\n"},
		op{"path": "a.txt", "search": "line p\n", "replace": "LINE P\n"},
		op{"path": "n.txt", "content": "new\n"},
	))
	res := reg.Invoke(context.Background(), inv, "patch", args)
	require.False(t, res.IsError, res.Content)
	entries := ws.Undo.Entries()
	require.Len(t, entries, 3)
	assert.Equal(t, "c1", entries[0].Conv)
	assert.Equal(t, 2, entries[0].Turn)
	for _, e := range entries {
		require.NotNil(t, e.Wrote, "%s %s keeps what it wrote", e.Op, e.Path)
	}

	files, notes := ws.ChangedFiles(entries)
	assert.Empty(t, notes)
	require.Len(t, files, 2)
	a, n := files[0], files[1]
	assert.Equal(t, "a.txt", a.Path)
	assert.True(t, n.Created())
	require.Len(t, a.Hunks, 2)
	assert.Equal(t, "lines 2-3", workspace.LinesText(a.Hunks[0]))

	// The user adds a line at the top and edits line t.
	path := filepath.Join(ws.Root, "a.txt")
	cur := toolstest.ReadFile(t, ws, "a.txt")
	user := "user top\n" + strings.Replace(cur, "line t\n", "line t (user)\n", 1)
	require.NoError(t, os.WriteFile(path, []byte(user), 0o644))
	review := func() *workspace.ChangedFile {
		files, _ := ws.ChangedFiles(ws.Undo.Entries())
		for _, f := range files {
			if f.Path == "a.txt" {
				return f
			}
		}
		return nil
	}
	a = review()
	require.Len(t, a.Hunks, 2, "the user's lines are not Fido's hunks")

	i, err := a.FindHunk(3, false) // "LINE B" is line 3 now
	require.NoError(t, err)
	assert.Equal(t, 0, i)
	_, err = a.FindHunk(21, false)
	assert.EqualError(t, err, "no change of Fido's at a.txt line 21 (the quickfix list shows where they are)")
	desc, err := ws.RevertHunk(context.Background(), a, i, workspace.UndoEntry{Conv: "c1", Turn: 2})
	require.NoError(t, err)
	assert.Equal(t, "lines 3-4", desc)
	want := "user top\n" + strings.Replace(strings.Replace(numbered(20), "line p\n", "LINE P\n", 1), "line t\n", "line t (user)\n", 1)
	assert.Equal(t, want, toolstest.ReadFile(t, ws, "a.txt"))
	e := ws.Undo.Entries()[0]
	assert.Equal(t, "review", e.Tool)
	assert.Equal(t, "edit", e.Op)
	assert.Equal(t, user, *e.Prior)
	a = review()
	require.Len(t, a.Hunks, 1, "the reverted hunk is gone from the review")

	// The user edits the remaining hunk: its revert and the file's are refused.
	edited := strings.Replace(want, "LINE P", "LINE P!", 1)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	a = review()
	require.Len(t, a.Hunks, 1)
	assert.True(t, a.Hunks[0].Edited)
	i, err = a.FindHunk(17, true)
	require.NoError(t, err)
	_, err = ws.RevertHunk(context.Background(), a, i, workspace.UndoEntry{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a.txt line 17 was edited after Fido's change")
	_, err = ws.RevertFile(context.Background(), a, workspace.UndoEntry{})
	require.Error(t, err, "the whole-file revert refuses to drop the user's edits")
	assert.Contains(t, err.Error(), "a.txt: line 17 was edited after Fido's change; nothing was changed")
	assert.Equal(t, edited, toolstest.ReadFile(t, ws, "a.txt"))

	desc, err = ws.RevertFile(context.Background(), n, workspace.UndoEntry{})
	require.NoError(t, err)
	assert.Contains(t, desc, "deleted")
	assert.NoFileExists(t, filepath.Join(ws.Root, "n.txt"))
}

// A file Fido deleted is reviewed against its content before, and the
// whole-file revert restores it.
func TestReviewRestoresDeletedFile(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"gone.txt": "keep me\n"})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	res := reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, Conversation: "c", Turn: 1}, "rm", json.RawMessage(`{"path":"gone.txt"}`))
	require.False(t, res.IsError, res.Content)
	files, _ := ws.ChangedFiles(ws.Undo.Entries())
	require.Len(t, files, 1)
	assert.True(t, files[0].Deleted())
	require.Len(t, files[0].Hunks, 1)
	assert.Equal(t, []string{"keep me\n"}, files[0].BeforeLines())
	desc, err := ws.RevertFile(context.Background(), files[0], workspace.UndoEntry{})
	require.NoError(t, err)
	assert.Contains(t, desc, "restored")
	assert.Equal(t, "keep me\n", toolstest.ReadFile(t, ws, "gone.txt"))
	files, _ = ws.ChangedFiles(ws.Undo.Entries())
	assert.Empty(t, files, "a second review sees the revert: nothing left")
}
