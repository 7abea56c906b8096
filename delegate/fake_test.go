package delegate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// step scripts one model call of the fake provider.
type step struct {
	reasoning, content string
	calls              []agent.ToolCall
	err                error
	// onRequest runs when the request arrives (before streaming).
	onRequest func()
	// block makes the call wait for cancellation after streaming.
	block bool
	// panicWith makes the provider panic.
	panicWith string
}

// fakeProvider answers requests from a script, in order, and records them.
type fakeProvider struct {
	mu    sync.Mutex
	steps []step
	reqs  []agent.Request
}

func (p *fakeProvider) Stream(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	p.mu.Lock()
	i := len(p.reqs)
	p.reqs = append(p.reqs, agent.Request{Model: req.Model, Reasoning: req.Reasoning,
		Messages: agent.CloneMessages(req.Messages), Tools: append([]tools.Spec(nil), req.Tools...)})
	p.mu.Unlock()
	if i >= len(p.steps) {
		return agent.Response{}, fmt.Errorf("fake provider: unexpected request %d", i+1)
	}
	s := p.steps[i]
	if s.onRequest != nil {
		s.onRequest()
	}
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	if s.reasoning != "" {
		onDelta(agent.Delta{Kind: agent.DeltaReasoning, Text: s.reasoning})
	}
	if s.content != "" {
		onDelta(agent.Delta{Kind: agent.DeltaContent, Text: s.content})
	}
	for j, c := range s.calls {
		onDelta(agent.Delta{Kind: agent.DeltaToolCall, ToolIndex: j, ToolName: c.Name})
	}
	if s.panicWith != "" {
		panic(s.panicWith)
	}
	if s.block {
		<-ctx.Done()
		return agent.Response{}, ctx.Err()
	}
	if s.err != nil {
		return agent.Response{}, s.err
	}
	return agent.Response{
		Message: agent.Message{Role: agent.RoleAssistant, Content: s.content, Reasoning: s.reasoning,
			ToolCalls: append([]agent.ToolCall(nil), s.calls...)},
		FinishReason: "stop",
		Usage:        agent.Usage{Calls: 1, Input: 100, Output: 10, CacheRead: 80, Cost: 0.001},
	}, nil
}

func (p *fakeProvider) requests() []agent.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]agent.Request(nil), p.reqs...)
}

// fakeTool is a tool of a given access level; mutating ones create a file.
type fakeTool struct {
	name   string
	access tools.Access
	dir    string
	mu     sync.Mutex
	runs   int
}

func (f *fakeTool) Name() string        { return f.name }
func (f *fakeTool) Description() string { return "fake " + f.name }
func (f *fakeTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"note":{"type":"string"}}}`)
}
func (f *fakeTool) Access() tools.Access { return f.access }

func (f *fakeTool) SummarizeCall(args json.RawMessage) string {
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	return a.Path
}

func (f *fakeTool) Run(_ context.Context, _ tools.Invocation, args json.RawMessage) (tools.Result, error) {
	f.mu.Lock()
	f.runs++
	f.mu.Unlock()
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	if f.access != tools.ReadOnly && a.Path != "" {
		if err := os.WriteFile(filepath.Join(f.dir, a.Path), []byte("x"), 0o644); err != nil {
			return tools.Result{}, err
		}
	}
	return tools.Result{Content: "contents of " + a.Path, Summary: "ok"}, nil
}

func (f *fakeTool) runCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs
}

// statusLog records activity-bar updates.
type statusLog struct {
	mu sync.Mutex
	s  []agent.SubagentStatus
}

func (l *statusLog) add(s *agent.SubagentStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s = append(l.s, *s)
}

func (l *statusLog) all() []agent.SubagentStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]agent.SubagentStatus(nil), l.s...)
}

func (l *statusLog) phases() []string {
	var out []string
	for _, s := range l.all() {
		if len(out) == 0 || out[len(out)-1] != s.Phase {
			out = append(out, s.Phase)
		}
	}
	return out
}

// harness is a parent session with fake tools of every access level and the
// delegate tool, all in one registry.
type harness struct {
	prov     *fakeProvider
	reg      *tools.Registry
	tool     *Tool
	read     *fakeTool
	mutating []*fakeTool
	ask      *fakeTool
	dir      string
	status   statusLog
	usageMu  sync.Mutex
	usage    []agent.Usage
}

func newHarness(t *testing.T, steps []step, edit func(*Config)) *harness {
	t.Helper()
	h := &harness{prov: &fakeProvider{steps: steps}, dir: t.TempDir()}
	h.read = &fakeTool{name: "read_file", access: tools.ReadOnly, dir: h.dir}
	for _, n := range []string{"patch", "mkdir", "rm", "rmdir", "bash_exec", "javascript_execute"} {
		h.mutating = append(h.mutating, &fakeTool{name: n, access: tools.Mutating, dir: h.dir})
	}
	h.ask = &fakeTool{name: "ask_user", access: tools.ParentOnly, dir: h.dir}
	cfg := Config{
		Provider: h.prov,
		Parent: &testParent{reg: func() *tools.Registry { return h.reg }, model: "test/model", reasoning: "low",
			status: h.status.add,
			usage: func(u agent.Usage) {
				h.usageMu.Lock()
				h.usage = append(h.usage, u)
				h.usageMu.Unlock()
			}},
		NewID: func() string { return "subagent-fixed01" },
	}
	if edit != nil {
		edit(&cfg)
	}
	h.tool = NewTool(cfg)
	ts := []tools.Tool{h.read, h.ask, h.tool}
	for _, m := range h.mutating {
		ts = append(ts, m)
	}
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	h.reg = reg
	return h
}

func (h *harness) parentLoop() *agent.Loop {
	return &agent.Loop{Provider: h.prov, Registry: h.reg, Model: "test/model", Reasoning: "low", MaxIterations: 10,
		Invocation: tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}}}
}

func parentStart() []agent.Message {
	return []agent.Message{
		{Role: agent.RoleSystem, Content: "You are Fido, a coding agent."},
		{Role: agent.RoleUser, Content: "Where is Foo called?"},
	}
}

func call(id, name, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: name, Arguments: args}
}

// toolResult finds the tool message answering callID.
func toolResult(t *testing.T, msgs []agent.Message, callID string) string {
	t.Helper()
	for _, m := range msgs {
		if m.Role == agent.RoleTool && m.ToolCallID == callID {
			return m.Content
		}
	}
	require.Failf(t, "no tool result", "call %s has no result", callID)
	return ""
}

func decodeResult(t *testing.T, content string) Result {
	t.Helper()
	var r Result
	require.NoError(t, json.Unmarshal([]byte(content), &r), content)
	return r
}

// testParent is the parent conversation the tests delegate from: a
// registry, a fixed model and effort, and what hears of the subagent.
type testParent struct {
	reg              func() *tools.Registry
	model, reasoning string
	status           func(*agent.SubagentStatus)
	usage            func(agent.Usage)
	hook             func(fork []agent.Message) func(agent.ToolCall, tools.Result) tools.Result
}

func (p *testParent) Registry() *tools.Registry { return p.reg() }
func (p *testParent) Model() string             { return p.model }
func (p *testParent) Reasoning() string         { return p.reasoning }
func (p *testParent) SubagentStatus(st *agent.SubagentStatus) {
	if p.status != nil {
		p.status(st)
	}
}
func (p *testParent) AddSubagentUsage(u agent.Usage) {
	if p.usage != nil {
		p.usage(u)
	}
}
func (p *testParent) SubagentHook(fork []agent.Message) func(agent.ToolCall, tools.Result) tools.Result {
	if p.hook == nil {
		return nil
	}
	return p.hook(fork)
}
