package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

func workspaceRegistry(t *testing.T, files map[string]string) (*tools.Workspace, *tools.Registry) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(c), 0o644))
	}
	ws, err := tools.NewWorkspace(root, nil, nil)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tools.WorkspaceTools(ws)...)
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

func readWS(t *testing.T, ws *tools.Workspace, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws.Root, rel))
	require.NoError(t, err)
	return string(b)
}
