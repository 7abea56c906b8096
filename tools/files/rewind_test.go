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

// A rewind puts back Fido's changes since the rewind point in each file;
// a file whose Fido line the user edited since, one with unsaved changes
// and one rmdir deleted are skipped and named, never overwritten.
func TestPlanAndApplyRewind(t *testing.T) {
	ws, ed := toolstest.Workspace(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n", "u.txt": "u0\n", "gone/x": "x\n"})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	call := func(turn int, name string, args any) {
		b, _ := json.Marshal(args)
		res := reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, Conversation: "c", Turn: turn}, name, b)
		require.False(t, res.IsError, res.Content)
	}
	call(1, "patch", ops(op{"path": "a.txt", "search": "a0", "replace": "a1"}))
	call(2, "patch", ops(op{"path": "a.txt", "search": "a1", "replace": "a2"}, op{"path": "n.txt", "content": "n\n"},
		op{"path": "b.txt", "search": "b0", "replace": "b2"}, op{"path": "u.txt", "search": "u0", "replace": "u2"}))
	call(3, "rm", readArgs("b.txt"))
	call(3, "mkdir", readArgs("emptydir"))
	call(3, "rmdir", readArgs("gone"))
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "u.txt"), []byte("u2 user\n"), 0o644))

	var since2 []workspace.UndoEntry
	for _, e := range ws.Undo.Entries() {
		if e.Turn >= 2 {
			since2 = append(since2, e)
		}
	}
	ed.Unsaved[filepath.Join(ws.Root, "a.txt")] = true
	plan := ws.PlanRewind(context.Background(), since2)
	assert.Contains(t, plan.Skipped, "a.txt: its buffer has unsaved changes")
	ed.Unsaved = map[string]bool{}
	plan = ws.PlanRewind(context.Background(), since2)
	assert.ElementsMatch(t, []string{"u.txt: line 1 was edited after Fido's change (kept as it is)", "gone/: rmdir does not keep the files it deleted"}, plan.Skipped)
	done, failed := ws.ApplyRewind(context.Background(), plan, workspace.UndoEntry{Conv: "c", Turn: 3})
	assert.Empty(t, failed)
	assert.ElementsMatch(t, []string{"restored a.txt", "deleted n.txt", "restored b.txt", "removed emptydir/"}, done)
	assert.Equal(t, "a1\n", toolstest.ReadFile(t, ws, "a.txt"))
	assert.Equal(t, "b0\n", toolstest.ReadFile(t, ws, "b.txt"))
	assert.Equal(t, "u2 user\n", toolstest.ReadFile(t, ws, "u.txt"))
	assert.NoFileExists(t, filepath.Join(ws.Root, "n.txt"))
	assert.NoDirExists(t, filepath.Join(ws.Root, "emptydir"))
	assert.Equal(t, "rewind", ws.Undo.Entries()[0].Tool)

	// Nothing left to do the second time.
	plan = ws.PlanRewind(context.Background(), since2)
	assert.Empty(t, plan.Steps)
}
