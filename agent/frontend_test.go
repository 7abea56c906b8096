package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

// screenOnly is a Screen and nothing else, whatever the value inside can
// do: a front end without an editor (what `fido acp` has).
type screenOnly struct{ Screen }

// askRecorder is a tools.Asker that records the questions and answers each
// with answer.
type askRecorder struct {
	mu        sync.Mutex
	answer    int
	questions []tools.Question
}

func (a *askRecorder) Ask(_ context.Context, q tools.Question) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.questions = append(a.questions, q)
	return a.answer, nil
}
func (a *askRecorder) Select(context.Context, string, []string) (int, error) { return -1, nil }
func (a *askRecorder) Input(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}

func newHeadlessSession(t *testing.T, p Provider, prompter tools.Prompter, cfg SessionConfig) (*Session, *recUI) {
	t.Helper()
	ui := &recUI{}
	cfg.Provider, cfg.Screen, cfg.Prompter, cfg.Model = p, screenOnly{ui}, prompter, "test/model"
	cfg.SystemPrompt = func() string { return "You are Fido." }
	s, err := NewSession(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, ui
}

// A session needs no editor: the commands that show windows only say what
// they can, a cancel puts nothing back, and a turn runs as with one.
func TestHeadlessSessionNeedsNoEditor(t *testing.T) {
	p := &scriptProvider{block: true}
	p.add(scriptReply{deltas: []Delta{{Kind: DeltaContent, Text: "working"}}})
	p.add(answer("done"))
	s, ui := newHeadlessSession(t, p, &askRecorder{}, SessionConfig{Permissions: nil})
	s.command("/plan")
	s.Plan("")
	s.command("/permissions")
	s.Review(ReviewRequest{Action: "open"})
	assert.True(t, ui.has("notice no plan yet"))
	assert.True(t, ui.has("notice command rules are not available"))

	s.Submit("one")
	require.Eventually(t, func() bool { return ui.lastState() == StateStreaming }, 2*time.Second, 5*time.Millisecond)
	s.Cancel()
	waitIdle(t, s)
	assert.True(t, ui.has("notice cancelled"))
	assert.Empty(t, ui.drafts, "no input to put the message back into")

	p.mu.Lock()
	p.block = false
	p.mu.Unlock()
	s.Submit("two")
	waitIdle(t, s)
	assert.True(t, ui.has("content done"))
	s.command("/quit")
	assert.False(t, ui.has("quit"))
}

// Without an editor to show a proposed edit in, review mode asks about it
// with the whole diff as the question's detail (an ACP client shows it in
// its permission request).
func TestEditReviewWithoutEditorAsksWithTheDiff(t *testing.T) {
	asker := &askRecorder{answer: 0} // Reject
	s, ui := newHeadlessSession(t, &scriptProvider{}, asker, SessionConfig{Edits: EditsReview})
	dec, err := s.trust.gate.Approve(context.Background(), tools.EditProposal{Tool: "patch", Summary: "a.go +1 -1",
		Files: []tools.FileChange{{Path: "a.go", Existed: true, Exists: true, Before: []byte("one\n"), After: []byte("two\n")}}})
	require.NoError(t, err)
	assert.False(t, dec.Apply)
	require.Len(t, asker.questions, 1)
	q := asker.questions[0]
	assert.Equal(t, "Fido patch: a.go — apply?", q.Prompt)
	assert.Equal(t, EditChoices, q.Items)
	assert.Equal(t, "Reject", q.Items[q.Safe])
	assert.True(t, q.Approval)
	assert.Equal(t, "diff", q.DetailFiletype)
	assert.Contains(t, q.Detail, "-one")
	assert.Contains(t, q.Detail, "+two")
	assert.False(t, ui.has("edit "), "nothing was shown in an editor")
}

// toolUI records the tool calls and results as the screen gets them.
type toolUI struct {
	*recUI
	mu      sync.Mutex
	calls   []ToolCallInfo
	results []ToolResultInfo
}

func (u *toolUI) ToolCall(c ToolCallInfo) {
	u.mu.Lock()
	u.calls = append(u.calls, c)
	u.mu.Unlock()
	u.recUI.ToolCall(c)
}

func (u *toolUI) ToolResult(r ToolResultInfo) {
	u.mu.Lock()
	u.results = append(u.results, r)
	u.mu.Unlock()
	u.recUI.ToolResult(r)
}

// A tool call reaches the screen with more than its line: the arguments as
// the model sent them, what the tool may do, and the result's content.
func TestToolCallCarriesArgumentsAndAccess(t *testing.T) {
	echo := &echoTool{name: "echo", access: tools.Mutating}
	p := (&scriptProvider{}).add(callTools(ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"hello"}`})).add(answer("ok"))
	ui := &toolUI{recUI: &recUI{}}
	s, err := NewSession(SessionConfig{Provider: p, Screen: ui, Prompter: ui, Registry: newRegistry(t, echo), Model: "test/model",
		SystemPrompt: func() string { return "You are Fido." }})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	s.Submit("go")
	waitIdle(t, s)
	require.Len(t, ui.calls, 1)
	assert.Equal(t, ToolCallInfo{ID: "c1", Name: "echo", Summary: `{"text":"hello"}`, Arguments: `{"text":"hello"}`, Access: tools.Mutating}, ui.calls[0])
	require.Len(t, ui.results, 1)
	assert.Equal(t, ToolResultInfo{ID: "c1", Name: "echo", Summary: "echoed", Content: "hello"}, ui.results[0])
}

// /help, completion and dispatch read one table: every built-in row is
// listed by both and runs its own handler, and only the rows that wait for
// the user or the model run on their own goroutine.
func TestSlashCommandsOneTable(t *testing.T) {
	s, ui := newTestSession(t, &scriptProvider{}, SessionConfig{})
	s.command("/help")
	var help string
	for _, e := range ui.Events() {
		if strings.HasPrefix(e, "notice commands:") {
			help = e
		}
	}
	completion := map[string]bool{}
	for _, c := range s.SlashCommands() {
		completion[c.Name] = true
	}
	async := map[string]bool{}
	for _, c := range Commands {
		assert.Contains(t, help, "\n  "+helpLine(c.Name, c.Args, c.Help), "/help lists %s", c.Name)
		assert.True(t, completion[c.Name], "completion lists %s", c.Name)
		row, ok := s.cmds.find(c.Name)
		require.True(t, ok, "%s dispatches", c.Name)
		assert.Equal(t, c, row.Command)
		async[c.Name] = row.Async
	}
	for _, name := range []string{"/suspend", "/recall", "/sessions", "/rewind", "/compact", "/model"} {
		assert.True(t, async[name], "%s runs on its own goroutine", name)
		delete(async, name)
	}
	for name, a := range async {
		assert.False(t, a, "%s runs in order with the messages", name)
	}
}
