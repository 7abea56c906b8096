package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// scriptProvider answers requests from a script, recording each request.
type scriptProvider struct {
	mu       sync.Mutex
	replies  []scriptReply
	requests []Request
	// block, when set, makes Stream wait for ctx cancellation after the deltas.
	block bool
}

type scriptReply struct {
	deltas []Delta
	msg    Message
	usage  Usage
	err    error
	// arrived, when set, is closed when the request arrives; the reply
	// then waits for release.
	arrived, release chan struct{}
}

func (p *scriptProvider) add(r scriptReply) *scriptProvider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append(p.replies, r)
	return p
}

func (p *scriptProvider) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	p.mu.Lock()
	req.Messages = CloneMessages(req.Messages)
	p.requests = append(p.requests, req)
	if len(p.replies) == 0 {
		p.mu.Unlock()
		return Response{}, &ProviderError{Message: "script exhausted"}
	}
	r := p.replies[0]
	p.replies = p.replies[1:]
	block := p.block
	p.mu.Unlock()
	if r.arrived != nil {
		close(r.arrived)
		<-r.release
	}
	for _, d := range r.deltas {
		onDelta(d)
	}
	if block {
		<-ctx.Done()
		return Response{}, ctx.Err()
	}
	if r.err != nil {
		return Response{}, r.err
	}
	u := r.usage
	u.Calls = 1
	r.msg.Role = RoleAssistant
	return Response{Message: r.msg, Usage: u, FinishReason: "stop"}, nil
}

func (p *scriptProvider) reqs() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

func answer(text string) scriptReply {
	return scriptReply{deltas: []Delta{{Kind: DeltaContent, Text: text}}, msg: Message{Content: text}, usage: Usage{Input: 10, Output: 3}}
}

func callTools(calls ...ToolCall) scriptReply {
	var ds []Delta
	for i, c := range calls {
		ds = append(ds, Delta{Kind: DeltaToolCall, ToolIndex: i, ToolName: c.Name})
	}
	return scriptReply{deltas: ds, msg: Message{ToolCalls: calls}, usage: Usage{Input: 5, Output: 2, CacheRead: 1, Cost: 0.001}}
}

// recUI records what the session shows: a Screen, a Prompter and an
// EditorSurface.
type recUI struct {
	mu       sync.Mutex
	events   []string
	states   []TurnState
	drafts   []string
	plans    []*plan.Plan
	showPlan int
	total    Usage
	sub      Usage
	selectFn func(items []string) int
	inputFn  func() (string, bool)
}

func (u *recUI) add(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.events = append(u.events, fmt.Sprintf(format, args...))
}

func (u *recUI) Info(i SessionInfo)       { u.add("info %s %s", i.Model, i.Reasoning) }
func (u *recUI) UserText(t string)        { u.add("user %s", t) }
func (u *recUI) Reasoning(d string)       { u.add("reasoning %s", d) }
func (u *recUI) Content(d string)         { u.add("content %s", d) }
func (u *recUI) Error(m string)           { u.add("error %s", m) }
func (u *recUI) Notice(m string)          { u.add("notice %s", m) }
func (u *recUI) Notify(m string, _ Level) { u.add("notify %s", m) }
func (u *recUI) ToolCall(c ToolCallInfo) {
	u.add("call %s %s", c.Name, c.Summary)
}
func (u *recUI) ToolResult(r ToolResultInfo) {
	u.add("result %s err=%v %s", r.Name, r.IsError, r.Summary)
}
func (u *recUI) SetState(s TurnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.states = append(u.states, s)
}
func (u *recUI) Usage(t, s Usage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.total, u.sub = t, s
}
func (u *recUI) Plan(p *plan.Plan) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.plans = append(u.plans, p)
}
func (u *recUI) ShowPlan(bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.showPlan++
}
func (u *recUI) Subagent(s *SubagentStatus) {
	if s == nil {
		u.add("subagent nil")
	} else {
		u.add("subagent %s", s.Phase)
	}
}
func (u *recUI) RestoreDraft(t string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.drafts = append(u.drafts, t)
}
func (u *recUI) Select(ctx context.Context, prompt string, items []string) (int, error) {
	if u.selectFn == nil {
		return -1, nil
	}
	return u.selectFn(items), nil
}
func (u *recUI) Input(ctx context.Context, prompt, def string) (string, bool, error) {
	if u.inputFn == nil {
		return "", false, nil
	}
	t, ok := u.inputFn()
	return t, ok, nil
}

func (u *recUI) Quit() { u.add("quit") }

func (u *recUI) OpenReview(v ReviewView) {
	u.add("review %d files %d hunks", len(v.Files), len(v.Items))
}

func (u *recUI) ShowEdit(title, diff string) {
	if diff == "" {
		u.add("edit closed")
		return
	}
	u.add("edit %s\n%s", title, diff)
}

func (u *recUI) has(prefix string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, e := range u.events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func (u *recUI) lastState() TurnState {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.states) == 0 {
		return ""
	}
	return u.states[len(u.states)-1]
}

// echoTool is a read-only tool that returns its "text" argument.
type echoTool struct {
	name   string
	access tools.Access
	runs   int
	mu     sync.Mutex
	onRun  func(ctx context.Context)
}

func (t *echoTool) Name() string        { return t.name }
func (t *echoTool) Description() string { return "echo " + t.name }
func (t *echoTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
}
func (t *echoTool) Access() tools.Access { return t.access }
func (t *echoTool) Run(ctx context.Context, inv tools.Invocation, args json.RawMessage) (tools.Result, error) {
	t.mu.Lock()
	t.runs++
	t.mu.Unlock()
	if t.onRun != nil {
		t.onRun(ctx)
	}
	var a struct {
		Text string `json:"text"`
	}
	if err := tools.DecodeArgs(args, &a); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	if a.Text == "" {
		return tools.ErrorResult("argument \"text\" is missing"), nil
	}
	return tools.Result{Content: a.Text, Summary: "echoed"}, nil
}

// memPlans is an in-memory PlanStore.
type memPlans struct {
	mu sync.Mutex
	p  *plan.Plan
	v  int
}

func (m *memPlans) Current() *plan.Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p == nil {
		return nil
	}
	c := *m.p
	return &c
}

func (m *memPlans) Clear() (plan.Plan, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.v + 1
	if m.p != nil && m.p.Version >= v {
		v = m.p.Version + 1
	}
	m.v = v
	m.p = nil
	return plan.Plan{Version: v, UpdatedAt: "2025-01-01T00:00:00.000Z", Reason: "plan cleared by the user", Items: []plan.Item{}}, nil
}
