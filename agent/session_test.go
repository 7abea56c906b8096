package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/plan"
)

func newTestSession(t *testing.T, p Provider, cfg SessionConfig) (*Session, *recUI) {
	t.Helper()
	ui := &recUI{}
	cfg.Provider = p
	cfg.Screen, cfg.Prompter, cfg.Editor = ui, ui, ui
	if cfg.SystemPrompt == nil {
		cfg.SystemPrompt = func() string { return BuildSystemPrompt(PromptInput{Root: "/w", Listing: "a.go\n"}) }
	}
	if cfg.Model == "" {
		cfg.Model = "test/model"
	}
	s, err := NewSession(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, ui
}

func waitIdle(t *testing.T, s *Session) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("turn did not finish")
	}
}

func TestSessionTurnStreamsAndTotals(t *testing.T) {
	echo := &echoTool{name: "echo"}
	p := (&scriptProvider{}).
		add(scriptReply{deltas: []Delta{{Kind: DeltaReasoning, Text: "hmm"}, {Kind: DeltaToolCall, ToolName: "echo"}},
			msg: Message{ToolCalls: []ToolCall{{ID: "1", Name: "echo", Arguments: `{"text":"x"}`}}}, usage: Usage{Input: 100, Output: 10, CacheRead: 50, Cost: 0.5}}).
		add(scriptReply{deltas: []Delta{{Kind: DeltaContent, Text: "Hello"}}, msg: Message{Content: "Hello"}, usage: Usage{Input: 120, Output: 5, Cost: 0.25}})
	s, ui := newTestSession(t, p, SessionConfig{Registry: newRegistry(t, echo)})
	s.Submit("explain main.go")
	waitIdle(t, s)
	assert.True(t, ui.has("user explain main.go"))
	assert.True(t, ui.has("reasoning hmm"))
	assert.True(t, ui.has("call echo"))
	assert.True(t, ui.has("result echo err=false echoed"))
	assert.True(t, ui.has("content Hello"))
	assert.Equal(t, []TurnState{StateIdle, StateConnecting, StateThinking, StateWorking, StateConnecting, StateStreaming, StateIdle}, ui.states)
	assert.Equal(t, Usage{Calls: 2, Input: 220, Output: 15, CacheRead: 50, Cost: 0.75}, ui.total)
	msgs := s.Messages()
	require.Len(t, msgs, 5)
	assert.Equal(t, RoleSystem, msgs[0].Role)
	assert.Equal(t, "Hello", msgs[4].Content)
}

func TestSessionSystemPromptAndToolsStableAcrossTurns(t *testing.T) {
	echo := &echoTool{name: "echo"}
	p := &scriptProvider{}
	const turns = 30
	for i := 0; i < turns; i++ {
		p.add(callTools(ToolCall{ID: fmt.Sprint("c", i), Name: "echo", Arguments: `{"text":"x"}`}))
		p.add(answer("ok"))
	}
	s, _ := newTestSession(t, p, SessionConfig{Registry: newRegistry(t, echo), Plans: &memPlans{}})
	for i := 0; i < turns; i++ {
		s.Submit(fmt.Sprint("turn ", i))
		waitIdle(t, s)
		if i%7 == 3 {
			s.ClearPlan()
		}
	}
	reqs := p.reqs()
	require.Len(t, reqs, 2*turns)
	first0, _ := json.Marshal(reqs[0].Messages[0])
	firstTools, _ := json.Marshal(reqs[0].Tools)
	for i, r := range reqs {
		m0, _ := json.Marshal(r.Messages[0])
		tl, _ := json.Marshal(r.Tools)
		require.Equal(t, string(first0), string(m0), "request %d", i)
		require.Equal(t, string(firstTools), string(tl), "request %d", i)
	}
}

func TestSessionCancelRestoresDraftAndGoesIdle(t *testing.T) {
	p := &scriptProvider{block: true}
	p.add(scriptReply{deltas: []Delta{{Kind: DeltaReasoning, Text: "thinking"}}})
	s, ui := newTestSession(t, p, SessionConfig{})
	s.Submit("a long question")
	require.Eventually(t, func() bool { return ui.lastState() == StateThinking }, 2*time.Second, 5*time.Millisecond)
	s.Cancel()
	assert.Equal(t, StateIdle, ui.lastState(), "idle at once")
	assert.Equal(t, []string{"a long question"}, ui.drafts)
	waitIdle(t, s)
	assert.Equal(t, StateIdle, ui.lastState())
	assert.Len(t, s.Messages(), 1, "the unsent question is not in the history")
	assert.False(t, s.Busy())
}

func TestSessionProviderErrorIsOneLineAndLosesNothing(t *testing.T) {
	p := (&scriptProvider{}).add(scriptReply{err: &ProviderError{Status: 401, Message: "OpenRouter rejected the API key (401)"}}).add(answer("fine"))
	s, ui := newTestSession(t, p, SessionConfig{})
	s.Submit("hello")
	waitIdle(t, s)
	assert.True(t, ui.has("error OpenRouter rejected the API key (401)"))
	assert.Equal(t, []string{"hello"}, ui.drafts)
	assert.Equal(t, StateIdle, ui.lastState())
	s.Submit("hello")
	waitIdle(t, s)
	assert.Len(t, s.Messages(), 3)
}

// A message sent while a turn runs is queued; <C-c> puts the cancelled
// message and the queued ones back into the input.
func TestSessionQueuesWhileBusyAndMissingKey(t *testing.T) {
	p := &scriptProvider{block: true}
	p.add(scriptReply{})
	s, ui := newTestSession(t, p, SessionConfig{})
	s.Submit("one")
	s.Submit("two")
	s.Submit("three")
	assert.True(t, ui.has("notice queued (2): three"))
	s.Cancel()
	waitIdle(t, s)
	assert.Contains(t, ui.drafts, "one\n\ntwo\n\nthree")

	s2, ui2 := newTestSession(t, &scriptProvider{}, SessionConfig{MissingKey: MissingKeyMessage})
	s2.Submit("hi")
	assert.True(t, ui2.has("error OPENROUTER_API_KEY is not set"))
	assert.False(t, s2.Busy())
}

func samplePlan() plan.Plan {
	return plan.Plan{Version: 3, UpdatedAt: "2025-01-01T00:00:00.000Z", Reason: "r", Items: []plan.Item{
		{ID: "inspect", Title: "Inspect", Status: plan.Done, Evidence: []string{"read a.go"}},
		{ID: "impl", Title: "Implement", Status: plan.InProgress, NextAction: "edit", Dependencies: []string{"inspect"}},
	}}
}

func TestSessionRestoresPlanAfterSystemMessage(t *testing.T) {
	p := (&scriptProvider{}).add(answer("ok"))
	sp := samplePlan()
	store := &memPlans{p: &sp}
	s, ui := newTestSession(t, p, SessionConfig{Plans: store})
	require.Len(t, ui.plans, 1)
	s.Submit("continue")
	waitIdle(t, s)
	req := p.reqs()[0]
	require.Len(t, req.Messages, 4)
	assert.Equal(t, RoleSystem, req.Messages[0].Role)
	assert.NotContains(t, req.Messages[0].Content, "Implement", "the plan never enters the system message")
	require.Len(t, req.Messages[1].ToolCalls, 1)
	assert.Equal(t, PlanToolName, req.Messages[1].ToolCalls[0].Name)
	assert.Equal(t, req.Messages[1].ToolCalls[0].ID, req.Messages[2].ToolCallID)
	var got plan.Plan
	require.NoError(t, json.Unmarshal([]byte(req.Messages[2].Content), &got))
	assert.Equal(t, sp, got, "the restored result is the complete plan")
	assert.Equal(t, RoleUser, req.Messages[3].Role)
}

func TestSessionClearPlanSyncsModelWithoutATurn(t *testing.T) {
	p := (&scriptProvider{}).add(answer("ok"))
	sp := samplePlan()
	s, ui := newTestSession(t, p, SessionConfig{Plans: &memPlans{p: &sp}})
	s.Plan("clear")
	assert.Empty(t, p.reqs(), "clearing spends no model turn")
	assert.Nil(t, ui.plans[len(ui.plans)-1])
	s.Submit("next")
	waitIdle(t, s)
	msgs := p.reqs()[0].Messages
	last := msgs[len(msgs)-2]
	require.Equal(t, RoleTool, last.Role)
	var got plan.Plan
	require.NoError(t, json.Unmarshal([]byte(last.Content), &got))
	assert.Empty(t, got.Items)
	assert.Equal(t, 4, got.Version)
	assert.Contains(t, last.Content, `"items":[]`)
}

func TestSlashCommandsSpendNoTurn(t *testing.T) {
	dir := t.TempDir()
	p := (&scriptProvider{}).add(answer("first answer"))
	sp := samplePlan()
	store := &memPlans{p: &sp}
	s, ui := newTestSession(t, p, SessionConfig{Plans: store, SuspendDir: dir, Undo: func(n int) []string { return []string{"patch a.go"} }})
	s.Submit("question")
	waitIdle(t, s)
	run := func(cmd string) {
		s.command(cmd) // synchronous for the test
	}
	run("/plan")
	assert.Equal(t, 1, ui.showPlan)
	run("/reasoning high")
	assert.Equal(t, "high", s.Reasoning())
	run("/reasoning bogus")
	assert.True(t, ui.has(`error /reasoning: "bogus"`))
	run("/undo")
	assert.True(t, ui.has("notice newest mutations (view only):\n  patch a.go"))
	run("/suspend my work")
	names, err := ListSnapshots(dir)
	require.NoError(t, err)
	require.Len(t, names, 1)
	b, err := os.ReadFile(filepath.Join(dir, names[0]))
	require.NoError(t, err)
	assert.Contains(t, string(b), "first answer")
	run("/nope")
	assert.True(t, ui.has("error unknown command /nope"))
	assert.Len(t, p.reqs(), 1)
}

func TestRecallKeepsWorkspacePlan(t *testing.T) {
	dir := t.TempDir()
	old := plan.Plan{Version: 1, UpdatedAt: "x", Reason: "old", Items: []plan.Item{{ID: "old", Title: "Old", Status: plan.Pending, NextAction: "n"}}}
	p := (&scriptProvider{}).add(answer("a1"))
	store := &memPlans{p: &old}
	s, ui := newTestSession(t, p, SessionConfig{Plans: store, SuspendDir: dir})
	s.Submit("q1")
	waitIdle(t, s)
	s.command("/suspend snap")
	// The workspace plan moves on.
	cur := samplePlan()
	store.p = &cur
	ui.selectFn = func(items []string) int { return 0 }
	s.command("/recall")
	msgs := s.Messages()
	assert.Equal(t, RoleSystem, msgs[0].Role)
	var restored plan.Plan
	require.NoError(t, json.Unmarshal([]byte(msgs[2].Content), &restored))
	assert.Equal(t, cur.Version, restored.Version, "recall keeps the current workspace plan")
	for _, m := range msgs[3:] {
		assert.Empty(t, m.ToolCalls, "the snapshot's plan calls are dropped")
	}
	assert.Equal(t, "a1", msgs[len(msgs)-1].Content)
}

func TestSubagentBarClearedWhenNextTurnStarts(t *testing.T) {
	p := (&scriptProvider{}).add(answer("ok"))
	s, ui := newTestSession(t, p, SessionConfig{})
	s.SubagentStatus(&SubagentStatus{AgentID: "subagent-1", Phase: "completed", Done: true})
	s.AddSubagentUsage(Usage{Calls: 2, Input: 10, Cost: 0.1})
	assert.Equal(t, Usage{Calls: 2, Input: 10, Cost: 0.1}, ui.sub)
	s.Submit("next")
	waitIdle(t, s)
	assert.True(t, ui.has("subagent nil"))
	assert.Equal(t, 3, ui.total.Calls)
}

func TestRecallSkipsCorruptSnapshotsAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20250101T000000Z-broken.json"), []byte("{not json"), 0o644))
	s, ui := newTestSession(t, &scriptProvider{}, SessionConfig{SuspendDir: dir})
	s.command("/recall")
	assert.True(t, ui.has("notice /recall: skipped 1 unreadable snapshot(s)"))
	assert.True(t, ui.has("error /recall: no readable snapshot"))
	_, err := os.Stat(filepath.Join(dir, "20250101T000000Z-broken.json"))
	assert.NoError(t, err, "a corrupt snapshot is never deleted")
	assert.Len(t, s.Messages(), 1)
}

func TestUndoRevertTellsTheModel(t *testing.T) {
	p := (&scriptProvider{}).add(answer("ok"))
	reverted := 0
	s, ui := newTestSession(t, p, SessionConfig{UndoRevert: func(context.Context) (string, error) {
		reverted++
		return "restored a.go as it was before the edit", nil
	}})
	s.command("/undo revert")
	assert.Equal(t, 1, reverted)
	assert.True(t, ui.has("notice reverted: restored a.go"))
	s.Submit("go on")
	waitIdle(t, s)
	msgs := p.reqs()[0].Messages
	require.Len(t, msgs, 3)
	assert.Contains(t, msgs[1].Content, "reverted your most recent file change")
	s.command("/undo bogus")
	assert.True(t, ui.has(`error /undo: unknown argument "bogus"`))
}

func TestQuitCancelsAndClosesWindows(t *testing.T) {
	p := &scriptProvider{block: true}
	p.add(scriptReply{deltas: []Delta{{Kind: DeltaReasoning, Text: "x"}}})
	s, ui := newTestSession(t, p, SessionConfig{})
	s.Submit("long task")
	require.Eventually(t, func() bool { return ui.lastState() == StateThinking }, 2*time.Second, 5*time.Millisecond)
	s.Submit("/quit")
	waitIdle(t, s)
	assert.True(t, ui.has("quit"))
	assert.False(t, s.Busy(), "the turn was cancelled")
}

func TestSessionCancelWithAStuckToolEndsTheTurnAtOnce(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	stuck := &echoTool{name: "stuck", onRun: func(context.Context) { close(started); <-release }}
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "a", Name: "stuck", Arguments: `{"text":"late"}`})).
		add(answer("fresh start"))
	s, ui := newTestSession(t, p, SessionConfig{Registry: newRegistry(t, stuck)})
	s.Submit("run the stuck tool")
	<-started
	s.Cancel()
	assert.Equal(t, StateIdle, ui.lastState())
	s.Submit("next question") // at once: never "still working"
	require.Eventually(t, func() bool { return len(s.Messages()) == 6 && !s.Busy() }, 3*time.Second, 5*time.Millisecond,
		"the next turn did not run while the tool is still stuck")
	assert.False(t, ui.has("error Fido is still working"))
	msgs := s.Messages()
	assertValidHistory(t, msgs)
	assert.Contains(t, msgs[3].Content, "cancelled")
	assert.Equal(t, "next question", msgs[4].Content)
	assert.Equal(t, "fresh start", msgs[5].Content)

	close(release) // the late result is dropped
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, msgs, s.Messages())
	assert.False(t, ui.has("result stuck err=false"))
}

func TestRecallRefusesMalformedSnapshots(t *testing.T) {
	valid := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "q"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Name: "read_file", Content: "a"},
		{Role: RoleAssistant, Content: "done"},
	}
	broken := func(f func(ms []Message) []Message) []Message { return f(CloneMessages(valid)) }
	cases := map[string]struct {
		msgs []Message
		why  string
	}{
		"orphan-result":  {broken(func(ms []Message) []Message { ms[3].ToolCallID = "zz"; return ms }), `a tool result for "zz", which no tool call before it awaits`},
		"unanswered":     {broken(func(ms []Message) []Message { return append(ms[:3:3], ms[4]) }), "tool call(s) of the message before have no result"},
		"dangling-end":   {broken(func(ms []Message) []Message { return ms[:3] }), "the last 1 tool call(s) have no result"},
		"dup-ids":        {broken(func(ms []Message) []Message { return append(ms, ms[2], ms[3]) }), `tool call id "c1" is used twice`},
		"bad-role":       {broken(func(ms []Message) []Message { ms[1].Role = "developer"; return ms }), `unknown role "developer"`},
		"bad-args":       {broken(func(ms []Message) []Message { ms[2].ToolCalls[0].Arguments = "{nope"; return ms }), "arguments that are not JSON"},
		"no-system":      {broken(func(ms []Message) []Message { return ms[1:] }), "not the system message"},
		"second-system":  {broken(func(ms []Message) []Message { return append(ms, Message{Role: RoleSystem, Content: "obey"}) }), "a second system message"},
		"empty-call-id":  {broken(func(ms []Message) []Message { ms[2].ToolCalls[0].ID = ""; ms[3].ToolCallID = ""; return ms }), "a tool call without an id"},
		"no-name":        {broken(func(ms []Message) []Message { ms[2].ToolCalls[0].Name = ""; return ms }), "has no name"},
		"empty-messages": {nil, "no messages"},
	}
	dir := t.TempDir()
	write := func(name string, msgs []Message) {
		b, err := json.Marshal(Snapshot{Version: 1, Description: name, Created: "2026-01-01T00:00:00Z", Messages: msgs})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "20260101T000000Z-"+name+".json"), b, 0o600))
	}
	for name, c := range cases {
		write(name, c.msgs)
	}
	write("good", valid)
	p := (&scriptProvider{}).add(answer("continued"))
	s, ui := newTestSession(t, p, SessionConfig{SuspendDir: dir})
	var offered []string
	ui.selectFn = func(items []string) int { offered = items; return 0 }
	s.command("/recall")
	require.Len(t, offered, 1, "only the valid snapshot is offered")
	assert.Contains(t, offered[0], "good")
	assert.True(t, ui.has(fmt.Sprintf("notice /recall: skipped %d unreadable snapshot(s)", len(cases))))
	for name, c := range cases {
		assert.True(t, ui.has("notice /recall: skipped") && strings.Contains(strings.Join(ui.events, "\n"), name+".json ("), name)
		assert.Contains(t, strings.Join(ui.events, "\n"), c.why, name)
	}
	s.Submit("go on")
	waitIdle(t, s)
	require.Len(t, p.reqs(), 1)
	require.NoError(t, ValidateHistory(p.reqs()[0].Messages), "the provider only ever gets a valid history")
}

// holdInfoUI blocks the first Info call after arm() until release: the
// window in which a cancelled turn has let go of the session but has not
// yet reported its end.
type holdInfoUI struct {
	*recUI
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (u *holdInfoUI) arm() {
	u.mu.Lock()
	u.armed, u.entered, u.release = true, make(chan struct{}), make(chan struct{})
	u.mu.Unlock()
}

func (u *holdInfoUI) Info(i SessionInfo) {
	u.mu.Lock()
	hold := u.armed
	u.armed = false
	entered, release := u.entered, u.release
	u.mu.Unlock()
	if hold {
		close(entered)
		<-release
	}
	u.recUI.Info(i)
}

// A message sent while a cancelled turn is still unwinding starts its own
// turn; the late end of the cancelled one must not put the new turn's
// state back to idle (the statusline and the plan float's compact form
// follow the state).
func TestLateEndOfACancelledTurnKeepsTheNextTurnsState(t *testing.T) {
	p := &scriptProvider{block: true}
	p.add(scriptReply{deltas: []Delta{{Kind: DeltaReasoning, Text: "thinking"}}})
	p.add(scriptReply{deltas: []Delta{{Kind: DeltaContent, Text: "again"}}})
	ui := &holdInfoUI{recUI: &recUI{}}
	s, err := NewSession(SessionConfig{Provider: p, Screen: ui, Prompter: ui, Editor: ui, Model: "test/model",
		SystemPrompt: func() string { return BuildSystemPrompt(PromptInput{Root: "/w", Listing: "a.go\n"}) }})
	require.NoError(t, err)
	t.Cleanup(s.Close)

	s.Submit("one")
	require.Eventually(t, func() bool { return ui.lastState() == StateThinking }, 2*time.Second, 5*time.Millisecond)
	ui.arm()
	s.slot.mu.Lock()
	first := s.slot.done
	s.slot.mu.Unlock()
	s.Cancel()
	select {
	case <-ui.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled turn did not reach its end")
	}
	s.Submit("two")
	require.Eventually(t, func() bool { return ui.lastState() == StateStreaming }, 2*time.Second, 5*time.Millisecond)
	close(ui.release)
	select {
	case <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled turn did not finish")
	}
	assert.Equal(t, StateStreaming, ui.lastState(), "the second turn still streams")
	assert.True(t, s.Busy())
	s.Cancel()
	waitIdle(t, s)
	assert.Equal(t, StateIdle, ui.lastState())
}
