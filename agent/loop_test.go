package agent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

func newRegistry(t *testing.T, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	r, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return r
}

// Every tool call in msgs has exactly one tool result after it.
func assertValidHistory(t *testing.T, msgs []Message) {
	t.Helper()
	open := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		if m.Role == RoleTool {
			assert.True(t, open[m.ToolCallID], "result %s without a call", m.ToolCallID)
			delete(open, m.ToolCallID)
		}
	}
	assert.Empty(t, open, "tool calls without results")
}

func TestLoopRunsToolsInOrderAndAnswers(t *testing.T) {
	echo := &echoTool{name: "echo"}
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "a", Name: "echo", Arguments: `{"text":"one"}`}, ToolCall{ID: "b", Name: "echo", Arguments: `{"text":"two"}`})).
		add(answer("done"))
	loop := &Loop{Provider: p, Registry: newRegistry(t, echo)}
	out, err := loop.Run(context.Background(), []Message{{Role: RoleSystem, Content: "sys"}, {Role: RoleUser, Content: "hi"}})
	require.NoError(t, err)
	require.Len(t, out, 6)
	assert.Equal(t, "one", out[3].Content)
	assert.Equal(t, "a", out[3].ToolCallID)
	assert.Equal(t, "two", out[4].Content)
	assert.Equal(t, "done", out[5].Content)
	assertValidHistory(t, out)
	reqs := p.reqs()
	require.Len(t, reqs, 2)
	assert.Len(t, reqs[1].Messages, 5, "second request carries both tool results")
	assert.Equal(t, reqs[0].Tools, reqs[1].Tools)
}

func TestLoopBadCallsBecomeToolErrors(t *testing.T) {
	echo := &echoTool{name: "echo"}
	p := (&scriptProvider{}).
		add(callTools(
			ToolCall{ID: "u", Name: "nosuch", Arguments: `{}`},
			ToolCall{ID: "j", Name: "echo", Arguments: `{"text":`},
			ToolCall{ID: "x", Name: "echo", Arguments: `{"text":1}`},
			ToolCall{ID: "", Name: "echo", Arguments: ``},
		)).
		add(answer("ok"))
	loop := &Loop{Provider: p, Registry: newRegistry(t, echo)}
	out, err := loop.Run(context.Background(), []Message{{Role: RoleUser, Content: "hi"}})
	require.NoError(t, err)
	assertValidHistory(t, out)
	assert.Contains(t, out[2].Content, `unknown tool \"nosuch\"`)
	assert.Contains(t, out[3].Content, "invalid JSON arguments")
	assert.Contains(t, out[4].Content, `argument \"text\" must be a string`)
	assert.Contains(t, out[5].Content, "missing")
	assert.NotEmpty(t, out[1].ToolCalls[3].ID, "a call without an id gets one")
	assert.Equal(t, "{}", out[1].ToolCalls[1].Arguments, "invalid arguments are not echoed into the history")
}

func TestLoopCancelLeavesValidHistory(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	first := &echoTool{name: "a", onRun: func(context.Context) { cancel() }}
	second := &echoTool{name: "b"}
	p := (&scriptProvider{}).add(callTools(
		ToolCall{ID: "1", Name: "a", Arguments: `{"text":"x"}`},
		ToolCall{ID: "2", Name: "b", Arguments: `{"text":"y"}`}))
	loop := &Loop{Provider: p, Registry: newRegistry(t, first, second)}
	out, err := loop.Run(ctx, []Message{{Role: RoleUser, Content: "hi"}})
	require.ErrorIs(t, err, context.Canceled)
	assertValidHistory(t, out)
	assert.Equal(t, 0, second.runs, "no tool runs after cancel")
	assert.Contains(t, out[len(out)-1].Content, "cancelled")
}

func TestLoopMaxIterations(t *testing.T) {
	echo := &echoTool{name: "echo"}
	p := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p.add(callTools(ToolCall{ID: string(rune('a' + i)), Name: "echo", Arguments: `{"text":"x"}`}))
	}
	loop := &Loop{Provider: p, Registry: newRegistry(t, echo), MaxIterations: 3}
	out, err := loop.Run(context.Background(), []Message{{Role: RoleUser, Content: "hi"}})
	require.ErrorIs(t, err, ErrMaxIterations)
	assertValidHistory(t, out)
	assert.Len(t, p.reqs(), 3)
}

func TestLoopProviderErrorKeepsInput(t *testing.T) {
	p := (&scriptProvider{}).add(scriptReply{err: &ProviderError{Status: 401, Message: "bad key"}})
	in := []Message{{Role: RoleUser, Content: "hi"}}
	out, err := (&Loop{Provider: p}).Run(context.Background(), in)
	var pe *ProviderError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, in, out)
}

func TestParentMessagesIsASnapshotAtCallTime(t *testing.T) {
	var seen []Message
	probe := &echoTool{name: "probe"}
	probe.onRun = func(ctx context.Context) {
		var ok bool
		seen, ok = ParentMessages(ctx)
		require.True(t, ok)
	}
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "1", Name: "probe", Arguments: `{"text":"x"}`}, ToolCall{ID: "2", Name: "probe", Arguments: `{"text":"y"}`})).
		add(answer("ok"))
	out, err := (&Loop{Provider: p, Registry: newRegistry(t, probe)}).Run(context.Background(), []Message{{Role: RoleUser, Content: "hi"}})
	require.NoError(t, err)
	// The second call saw the user message, the assistant call and the first result.
	require.Len(t, seen, 3)
	assert.Equal(t, "x", seen[2].Content)
	seen[1].ToolCalls[0].Name = "mutated"
	assert.Equal(t, "probe", out[1].ToolCalls[0].Name, "the snapshot is a deep copy")
	_, ok := ParentMessages(context.Background())
	assert.False(t, ok)
}

func TestLoopCancelDuringStream(t *testing.T) {
	p := &scriptProvider{block: true}
	p.add(scriptReply{deltas: []Delta{{Kind: DeltaContent, Text: "par"}}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	out, err := (&Loop{Provider: p}).Run(ctx, []Message{{Role: RoleUser, Content: "hi"}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, out, 1)
}

func TestCloneMessagesIsDeep(t *testing.T) {
	in := []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "a"}}, ReasoningDetails: json.RawMessage(`[1]`)}}
	c := CloneMessages(in)
	c[0].ToolCalls[0].Name = "b"
	c[0].ReasoningDetails[1] = '2'
	assert.Equal(t, "a", in[0].ToolCalls[0].Name)
	assert.Equal(t, `[1]`, string(in[0].ReasoningDetails))
}

func TestLoopMakesDuplicateToolCallIDsUnique(t *testing.T) {
	echo := &echoTool{name: "echo"}
	// The provider repeats "dup" within one answer and reuses "old", an id
	// already in the history.
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "dup", Name: "echo", Arguments: `{"text":"one"}`},
			ToolCall{ID: "dup", Name: "echo", Arguments: `{"text":"two"}`},
			ToolCall{ID: "old", Name: "echo", Arguments: `{"text":"three"}`})).
		add(answer("done"))
	history := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "before"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "old", Name: "echo", Arguments: `{"text":"x"}`}}},
		{Role: RoleTool, ToolCallID: "old", Name: "echo", Content: "x"},
		{Role: RoleUser, Content: "hi"},
	}
	out, err := (&Loop{Provider: p, Registry: newRegistry(t, echo)}).Run(context.Background(), history)
	require.NoError(t, err)
	require.Len(t, out, 10)
	calls := out[5].ToolCalls
	require.Len(t, calls, 3)
	ids := map[string]bool{"old": true}
	for _, c := range calls {
		assert.False(t, ids[c.ID], "id %q is used twice in the conversation", c.ID)
		ids[c.ID] = true
	}
	assert.Equal(t, "dup", calls[0].ID, "the first use of an id is kept")
	// Each result is still paired with its own call.
	for i, want := range []string{"one", "two", "three"} {
		assert.Equal(t, calls[i].ID, out[6+i].ToolCallID)
		assert.Equal(t, want, out[6+i].Content)
	}
	assertValidHistory(t, out)
	// The next request carries the unique ids.
	reqs := p.reqs()
	require.Len(t, reqs, 2)
	assert.Equal(t, calls, reqs[1].Messages[5].ToolCalls)
}

func TestLoopCancelDoesNotWaitForAStuckTool(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	// The tool ignores its context, as one stuck in a system call would.
	stuck := &echoTool{name: "stuck", onRun: func(context.Context) { close(started); <-release }}
	t.Cleanup(func() { close(release) })
	p := (&scriptProvider{}).
		add(callTools(ToolCall{ID: "a", Name: "stuck", Arguments: `{"text":"late"}`}, ToolCall{ID: "b", Name: "stuck", Arguments: `{"text":"never"}`}))
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		out []Message
		err error
	}
	got := make(chan result, 1)
	go func() {
		out, err := (&Loop{Provider: p, Registry: newRegistry(t, stuck)}).Run(ctx, []Message{{Role: RoleSystem, Content: "sys"}, {Role: RoleUser, Content: "hi"}})
		got <- result{out, err}
	}()
	<-started
	cancel()
	select {
	case r := <-got:
		require.ErrorIs(t, r.err, context.Canceled)
		require.Len(t, r.out, 5)
		assertValidHistory(t, r.out)
		assert.Contains(t, r.out[3].Content, "cancelled: the turn was cancelled while this tool was running")
		assert.Contains(t, r.out[4].Content, "not run")
	case <-time.After(2 * time.Second):
		t.Fatal("Run waited for a tool stuck past the cancel")
	}
}
