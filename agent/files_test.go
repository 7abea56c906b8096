package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/files"
	"github.com/fido-nvim/fido/tools/workspace"
)

func workspaceRegistry(t *testing.T, tree map[string]string) (*workspace.Workspace, *tools.Registry) {
	t.Helper()
	root := t.TempDir()
	for p, c := range tree {
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(c), 0o644))
	}
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(files.Tools(ws)...)
	require.NoError(t, err)
	return ws, reg
}

func lastToolResult(t *testing.T, p *scriptProvider) string {
	t.Helper()
	reqs := p.reqs()
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleTool {
			return msgs[i].Content
		}
	}
	t.Fatal("no tool result")
	return ""
}

// What the conversation saw of a file outlives the turn (and the compaction
// after it) and a /suspend → /recall into a new session (a restarted host);
// a new conversation without it must read the file before overwriting it.
func TestSeenFilesSurviveCompactionAndRecall(t *testing.T) {
	ws, reg := workspaceRegistry(t, map[string]string{"a.txt": "one\n"})
	dir := t.TempDir()
	overwrite := ToolCall{ID: "c2", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","content":"two\n"}]}`}
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`})).add(answer("read")).
		add(callTools(overwrite)).add(answer("done"))
	s, ui := newTestSession(t, p, SessionConfig{Registry: reg, SuspendDir: dir})
	s.Submit("read a.txt")
	waitIdle(t, s)
	s.Submit("now overwrite it")
	waitIdle(t, s)
	assert.NotContains(t, lastToolResult(t, p), "error", "the read of the earlier turn counts")
	require.Equal(t, "two\n", readWS(t, ws, "a.txt"))
	s.command("/suspend work")
	require.True(t, ui.has("notice suspended"))

	// A restarted host: a new session over the same state.
	again := ToolCall{ID: "c3", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","content":"three\n"}]}`}
	p2 := (&scriptProvider{}).add(callTools(again)).add(answer("refused"))
	s2, _ := newTestSession(t, p2, SessionConfig{Registry: reg, SuspendDir: dir})
	s2.Submit("overwrite a.txt")
	waitIdle(t, s2)
	assert.Contains(t, lastToolResult(t, p2), "read it before overwriting it", "a new conversation has seen nothing")
	assert.Equal(t, "two\n", readWS(t, ws, "a.txt"))

	p3 := (&scriptProvider{}).add(callTools(again)).add(answer("done"))
	s3, ui3 := newTestSession(t, p3, SessionConfig{Registry: reg, SuspendDir: dir})
	ui3.selectFn = func([]string) int { return 0 }
	s3.command("/recall")
	s3.Submit("overwrite a.txt")
	waitIdle(t, s3)
	assert.NotContains(t, lastToolResult(t, p3), "error", "the recalled conversation knows what it wrote")
	assert.Equal(t, "three\n", readWS(t, ws, "a.txt"))
}

// A resumed conversation starts from what it saw when it was saved.
func TestSessionResumesSeenFiles(t *testing.T) {
	ws, reg := workspaceRegistry(t, map[string]string{"a.txt": "one\n"})
	first, _ := newTestSession(t, &scriptProvider{}, SessionConfig{Registry: reg})
	assert.Empty(t, first.SeenFiles())
	over := ToolCall{ID: "c", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","content":"two\n"}]}`}
	p := (&scriptProvider{}).add(callTools(over)).add(answer("done"))
	seen := map[string]string{"a.txt": "2c8b08da5ce60398e1f19af0e5dccc744df274b826abe585eaba68c525434806"} // sha256("one\n")
	s, _ := newTestSession(t, p, SessionConfig{Registry: reg, SeenFiles: seen, ConversationID: "20260101T000000Z-abcd0123"})
	s.Submit("overwrite")
	waitIdle(t, s)
	assert.NotContains(t, lastToolResult(t, p), "error")
	assert.Equal(t, "two\n", readWS(t, ws, "a.txt"))
	id, _ := s.hist.ident()
	assert.Equal(t, "20260101T000000Z-abcd0123", id)
}

func readWS(t *testing.T, ws *workspace.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, rel))
	require.NoError(t, err)
	return string(b)
}

func undoWorkspace(t *testing.T, tree map[string]string) (*workspace.Workspace, *tools.Registry) {
	t.Helper()
	root := t.TempDir()
	for p, c := range tree {
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(c), 0o644))
	}
	undo, err := workspace.OpenUndoLog(filepath.Join(t.TempDir(), "undo.json"))
	require.NoError(t, err)
	ws, err := workspace.New(root, nil, undo)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(files.Tools(ws)...)
	require.NoError(t, err)
	return ws, reg
}

// /rewind "Files only": files go back, the conversation stays, and the
// commands that ran after that point are named (their effects are not
// restorable).
func TestRewindFilesOnlyNamesCommands(t *testing.T) {
	ws, reg := undoWorkspace(t, map[string]string{"a.txt": "v0\n"})
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "1", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","search":"v0","replace":"v1"}]}`})).add(answer("one")).
		add(callTools(ToolCall{ID: "2", Name: "bash_exec", Arguments: `{"command":"make gen"}`},
			ToolCall{ID: "3", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","search":"v1","replace":"v2"}]}`})).add(answer("two"))
	s, ui := newTestSession(t, p, SessionConfig{Registry: reg, Workspace: ws})
	s.Submit("first")
	waitIdle(t, s)
	s.Submit("second")
	waitIdle(t, s)
	require.Equal(t, "v2\n", readWS(t, ws, "a.txt"))
	before := len(s.Messages())
	var prompts [][]string
	ui.selectFn = func(items []string) int {
		prompts = append(prompts, items)
		if len(prompts) == 1 {
			return 0 // the newest message: "second"
		}
		return 2 // Files only
	}
	s.command("/rewind")
	assert.Equal(t, "v1\n", readWS(t, ws, "a.txt"))
	assert.Len(t, s.Messages(), before, "the conversation is unchanged")
	assert.True(t, ui.has("notice rewind: will restore: a.txt; commands ran after it, their changes cannot be restored: `make gen`"))
	assert.True(t, ui.has("notice rewind: restored a.txt"))
	assert.Contains(t, prompts[0][0], "second")
	assert.Contains(t, prompts[0][0], "changed after it: a.txt")
	assert.Contains(t, prompts[0][1], "first")
}

// A revert note waits for a message the conversation keeps: when the turn
// fails before anything happened, the next message carries it.
func TestRevertNoteSurvivesAFailedTurn(t *testing.T) {
	ws, reg := undoWorkspace(t, map[string]string{"a.txt": "1\n2\n3\n"})
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "1", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","search":"2","replace":"two"}]}`})).add(answer("done")).
		add(scriptReply{err: &ProviderError{Message: "overloaded"}}).
		add(answer("ok"))
	s, ui := newTestSession(t, p, SessionConfig{Registry: reg, Workspace: ws})
	s.Submit("change it")
	waitIdle(t, s)
	s.Review(ReviewRequest{Action: "open"})
	require.True(t, ui.has("review 1 files 1 hunks"))
	s.Review(ReviewRequest{Action: "revert", Path: "a.txt", Line: 2, Reason: "no"})
	require.Equal(t, "1\n2\n3\n", readWS(t, ws, "a.txt"))
	s.Submit("hello")
	waitIdle(t, s)
	s.Submit("hello again")
	waitIdle(t, s)
	reqs := p.reqs()
	last := reqs[len(reqs)-1].Messages
	assert.Equal(t, "hello again\n\n[user reverted: a.txt line 2 (reason: no)]", last[len(last)-1].Content)
}
