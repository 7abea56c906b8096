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

// fakeGate answers reviews from a script and records the proposals.
type fakeGate struct {
	asked    []tools.EditProposal
	decision tools.EditDecision
	err      error
	during   func() // runs while the user "looks"
}

func (g *fakeGate) Reviewing() bool { return true }
func (g *fakeGate) Approve(ctx context.Context, p tools.EditProposal) (tools.EditDecision, error) {
	g.asked = append(g.asked, p)
	if g.during != nil {
		g.during()
	}
	return g.decision, g.err
}

func runGated(t *testing.T, ws *workspace.Workspace, g tools.EditGate, name string, args any) tools.Result {
	t.Helper()
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, Files: tools.NewFileTracker(nil), Gate: g}, name, b)
}

// The proposal is exactly what the operations would write: every affected
// file with its content before and after, new files marked, a failing
// operation named; nothing is written before the user decides.
func TestReviewPatchProposalAndApply(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "one\ntwo\n"})
	g := &fakeGate{decision: tools.EditDecision{Apply: true}}
	g.during = func() {
		assert.Equal(t, "one\ntwo\n", toolstest.ReadFile(t, ws, "a.txt"), "nothing written while the user decides")
		assert.NoFileExists(t, filepath.Join(ws.Root, "n.txt"))
	}
	res := runGated(t, ws, g, "patch", ops(
		op{"path": "a.txt", "search": "two", "replace": "TWO"},
		op{"path": "n.txt", "content": "new\n"},
		op{"path": "a.txt", "search": "one", "replace": "ONE"},
	))
	require.False(t, res.IsError, res.Content)
	require.Len(t, g.asked, 1)
	p := g.asked[0]
	assert.Equal(t, "patch", p.Tool)
	require.Len(t, p.Files, 2)
	assert.Equal(t, tools.FileChange{Path: "a.txt", Existed: true, Exists: true, Before: []byte("one\ntwo\n"), After: []byte("ONE\nTWO\n")}, p.Files[0])
	assert.Equal(t, tools.FileChange{Path: "n.txt", Exists: true, After: []byte("new\n")}, p.Files[1])
	assert.Equal(t, "ONE\nTWO\n", toolstest.ReadFile(t, ws, "a.txt"))

	g.asked, g.during = nil, nil
	res = runGated(t, ws, g, "patch", ops(
		op{"path": "a.txt", "search": "ONE", "replace": "1"},
		op{"path": "a.txt", "search": "missing", "replace": "x"},
	))
	require.True(t, res.IsError)
	require.Len(t, g.asked, 1)
	assert.Contains(t, g.asked[0].Note, "operation 2 of 2 would fail")
	assert.Equal(t, []byte("1\nTWO\n"), g.asked[0].Files[0].After)
}

func TestReviewRejectCancelAndChangedMeanwhile(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "one\n"})
	change := ops(op{"path": "a.txt", "search": "one", "replace": "ONE"})

	g := &fakeGate{decision: tools.EditDecision{Reason: "keep it lowercase"}}
	res := runGated(t, ws, g, "patch", change)
	assert.False(t, res.IsError, "a rejection is a normal result")
	assert.Contains(t, res.Content, "The user rejected this change; nothing was written. Their reason: keep it lowercase")
	assert.Equal(t, "one\n", toolstest.ReadFile(t, ws, "a.txt"))

	g = &fakeGate{err: context.Canceled}
	res = runGated(t, ws, g, "patch", change)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "nothing was written")
	assert.Equal(t, "one\n", toolstest.ReadFile(t, ws, "a.txt"))

	g = &fakeGate{decision: tools.EditDecision{Apply: true}, during: func() {
		require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "a.txt"), []byte("one\nuser\n"), 0o644))
	}}
	res = runGated(t, ws, g, "patch", change)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "changed on disk while the user was reviewing")
	assert.Equal(t, "one\nuser\n", toolstest.ReadFile(t, ws, "a.txt"))
	assert.Empty(t, ws.Undo.Entries())
}

func TestReviewRmAndRmdir(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "bye\n", "d/x.txt": "x\n", "d/y.txt": "y\n"})
	g := &fakeGate{}
	res := runGated(t, ws, g, "rm", readArgs("a.txt"))
	require.False(t, res.IsError)
	assert.Contains(t, res.Content, "rejected")
	assert.FileExists(t, filepath.Join(ws.Root, "a.txt"))
	require.Len(t, g.asked, 1)
	assert.Equal(t, tools.FileChange{Path: "a.txt", Existed: true, Before: []byte("bye\n")}, g.asked[0].Files[0])

	res = runGated(t, ws, g, "rmdir", readArgs("d"))
	assert.Contains(t, res.Content, "rejected")
	assert.FileExists(t, filepath.Join(ws.Root, "d/x.txt"))
	require.Len(t, g.asked, 2)
	assert.Len(t, g.asked[1].Files, 2)
	assert.Contains(t, g.asked[1].Note, "with 2 files")

	g.decision = tools.EditDecision{Apply: true}
	require.False(t, runGated(t, ws, g, "rmdir", readArgs("d")).IsError)
	assert.NoDirExists(t, filepath.Join(ws.Root, "d"))
	require.False(t, runGated(t, ws, g, "rm", readArgs("a.txt")).IsError)
	assert.NoFileExists(t, filepath.Join(ws.Root, "a.txt"))
}

// A file too large to preview is still asked about, never written unreviewed.
func TestReviewWithoutPreviewStillAsks(t *testing.T) {
	big := strings.Repeat("x\n", maxPatchFileSize/2+1)
	ws, _ := toolstest.Workspace(t, map[string]string{"big.txt": big})
	g := &fakeGate{}
	res := runGated(t, ws, g, "patch", ops(op{"path": "big.txt", "content": "small\n"}))
	require.Len(t, g.asked, 1)
	assert.Contains(t, g.asked[0].Note, "no preview")
	assert.Equal(t, "big.txt", g.asked[0].Files[0].Path)
	assert.Contains(t, res.Content, "rejected")
	assert.Equal(t, big, toolstest.ReadFile(t, ws, "big.txt"))
}

func TestReviewRmdirRefusesFilesAddedMeanwhile(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"d/x.txt": "x\n"})
	g := &fakeGate{decision: tools.EditDecision{Apply: true}, during: func() {
		require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "d", "new.txt"), []byte("n\n"), 0o644))
	}}
	res := runGated(t, ws, g, "rmdir", readArgs("d"))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "changed while the user was reviewing")
	assert.FileExists(t, filepath.Join(ws.Root, "d", "new.txt"))
}
