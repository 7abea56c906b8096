package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

// askUI is a recUI that shows a question's detail (tools.Asker), as the
// Neovim UI does; answer picks the index into q.Items.
type askUI struct {
	*recUI
	mu     sync.Mutex
	asked  []tools.Question
	answer func(q tools.Question) int
}

func (u *askUI) Ask(_ context.Context, q tools.Question) (int, error) {
	u.mu.Lock()
	u.asked = append(u.asked, q)
	u.mu.Unlock()
	return u.answer(q), nil
}

func (u *askUI) questions() []tools.Question {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]tools.Question(nil), u.asked...)
}

func newAskSession(t *testing.T, p Provider, cfg SessionConfig) (*Session, *askUI) {
	t.Helper()
	ui := &askUI{recUI: &recUI{}}
	cfg.Provider, cfg.Screen, cfg.Prompter, cfg.Editor, cfg.Model = p, ui, ui, ui, "test/model"
	cfg.SystemPrompt = func() string { return BuildSystemPrompt(PromptInput{Root: "/w", Listing: "a.go\n"}) }
	s, err := NewSession(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, ui
}

func indexOf(items []string, want string) int {
	for i, it := range items {
		if it == want {
			return i
		}
	}
	return -1
}

// /edits review asks one question holding the whole diff (the editor shows
// it beside the choices, scrollable), Reject first: its safe choice applies
// nothing, and Apply applies.
func TestEditReviewAsksWithTheWholeDiff(t *testing.T) {
	ws, reg := workspaceRegistry(t, map[string]string{"a.txt": "one\n"})
	p := &scriptProvider{}
	patchTurn(p, "p1", "one", "two")
	patchTurn(p, "p2", "one", "two")
	s, ui := newAskSession(t, p, SessionConfig{Registry: reg, Edits: EditsReview})
	ui.answer = func(q tools.Question) int { return q.Safe }

	s.Submit("edit 1")
	waitIdle(t, s)
	qs := ui.questions()
	require.Len(t, qs, 1)
	q := qs[0]
	assert.Equal(t, []string{"Reject", "Reject with reason…", "Apply", "Apply all this turn"}, q.Items)
	assert.Equal(t, "Reject", q.Items[q.Safe], "the safe choice is Reject")
	assert.True(t, q.Approval)
	assert.Equal(t, "diff", q.DetailFiletype)
	for _, want := range []string{"--- a/a.txt", "+++ b/a.txt", "-one", "+two"} {
		assert.Contains(t, q.Detail, want)
	}
	assert.Contains(t, q.Prompt, "a.txt")
	assert.Equal(t, "one\n", readWS(t, ws, "a.txt"), "the safe choice wrote nothing")
	assert.Contains(t, lastToolResult(t, p), "rejected")
	assert.False(t, ui.has("edit patch"), "no separate preview: the diff is the question's")

	ui.answer = func(q tools.Question) int { return indexOf(q.Items, EditApply) }
	s.Submit("edit 2")
	waitIdle(t, s)
	assert.Equal(t, "two\n", readWS(t, ws, "a.txt"))
}

// /rewind's second question restores the least first (Cancel) and carries
// the whole message, every file it would restore and every command it
// cannot undo, so nothing is cut at a picker's width.
func TestRewindAsksWithEverythingItWouldDo(t *testing.T) {
	ws, reg := undoWorkspace(t, map[string]string{"a.txt": "v0\n"})
	long := "please change a.txt to v1 and explain, in detail, why the old value was wrong\nsecond line of the message"
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "1", Name: "patch", Arguments: `{"operations":[{"path":"a.txt","search":"v0","replace":"v1"}]}`})).add(answer("one")).
		add(callTools(ToolCall{ID: "2", Name: "bash_exec", Arguments: `{"command":"make gen"}`})).add(answer("two"))
	s, ui := newAskSession(t, p, SessionConfig{Registry: reg, Workspace: ws})
	s.Submit(long)
	waitIdle(t, s)
	s.Submit("second")
	waitIdle(t, s)
	ui.selectFn = func(items []string) int { return len(items) - 1 } // the oldest message
	ui.answer = func(q tools.Question) int { return q.Safe }
	before := len(s.Messages())
	s.command("/rewind")

	qs := ui.questions()
	require.Len(t, qs, 1)
	q := qs[0]
	assert.Equal(t, []string{"Cancel", "Conversation only", "Files only", "Conversation and files"}, q.Items)
	assert.Equal(t, "Cancel", q.Items[q.Safe])
	assert.False(t, q.Approval)
	assert.Less(t, len([]rune(q.Prompt)), 80, "the prompt stays short: %q", q.Prompt)
	for _, l := range strings.Split(long, "\n") {
		assert.Contains(t, q.Detail, l, "the whole message")
	}
	assert.Contains(t, q.Detail, "restore:\n  a.txt\n")
	assert.Contains(t, q.Detail, "cannot be restored:\n  `make gen`")
	assert.True(t, ui.has("notice rewind cancelled"), "the safe choice changes nothing")
	assert.Equal(t, "v1\n", readWS(t, ws, "a.txt"))
	assert.Len(t, s.Messages(), before)
}
