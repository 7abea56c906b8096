package delegate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

const marker = "MARKER-7f3a9c"

func TestDelegateEndToEnd(t *testing.T) {
	final := "Here is my result:\n```json\n" +
		`{"status":"completed","summary":"Foo is called from bar.go.","findings":[{"file":"pkg/bar.go","line":7,"claim":"bar calls Foo","confidence":"high"}],"recommended_next_steps":["check pkg/bar.go"],"tests_to_run":["go test ./pkg"],"uncertainties":[]}` +
		"\n```"
	subCalls := []agent.ToolCall{
		call("s1", "read_file", `{"path":"pkg/bar.go","note":"`+marker+`"}`),
		call("s2", "ask_user", `{"note":"`+marker+`"}`),
		call("s3", "delegate", `{"task":"nested `+marker+`"}`),
	}
	for i, m := range []string{"patch", "mkdir", "rm", "rmdir", "bash_exec", "javascript_execute"} {
		subCalls = append(subCalls, call(fmt.Sprintf("m%d", i), m, fmt.Sprintf(`{"path":"created-%d.txt"}`, i)))
	}
	h := newHarness(t, []step{
		{reasoning: "parent plans", calls: []agent.ToolCall{
			call("c1", "read_file", `{"path":"main.go"}`),
			call("c2", "delegate", `{"task":"find callers of Foo","context":"saves my context","scope":{"paths":["pkg/"],"symbols":["Foo"]}}`),
			call("c3", "read_file", `{"path":"other.go"}`),
		}},
		{reasoning: "private thoughts " + marker, content: "I am the main agent (role main) " + marker, calls: subCalls},
		{reasoning: "more " + marker, content: final},
		{content: "Foo is called from pkg/bar.go."},
	}, nil)

	conv, err := h.parentLoop().Run(context.Background(), parentStart())
	require.NoError(t, err)
	reqs := h.prov.requests()
	require.Len(t, reqs, 4, "parent, subagent twice, parent: the nested delegate made no request")
	parent1, sub1, sub2, parent2 := reqs[0], reqs[1], reqs[2], reqs[3]

	// Same catalog, byte for byte, and a shared prefix.
	parentTools, err := json.Marshal(parent1.Tools)
	require.NoError(t, err)
	for _, r := range []agent.Request{sub1, sub2, parent2} {
		b, err := json.Marshal(r.Tools)
		require.NoError(t, err)
		assert.Equal(t, string(parentTools), string(b))
		assert.Equal(t, parent1.Model, r.Model)
	}
	assert.Equal(t, parent1.Messages[0], sub1.Messages[0], "messages[0] is the parent's system message")
	assert.Equal(t, parent1.Messages, sub1.Messages[:len(parent1.Messages)], "the fork extends the parent's request")
	assert.Equal(t, conv[2], sub1.Messages[2], "the fork holds the assistant message that called delegate")

	// The fork: parent's messages at the call, bootstrap, instructions.
	require.Len(t, sub1.Messages, 7)
	assert.Equal(t, "contents of main.go", toolResult(t, sub1.Messages, "c1"))
	boot := sub1.Messages[4]
	assert.Equal(t, "c2", boot.ToolCallID)
	var b Bootstrap
	require.NoError(t, json.Unmarshal([]byte(boot.Content), &b))
	assert.Equal(t, "subagent_bootstrap", b.Type)
	assert.Equal(t, tools.Identity{Role: tools.RoleSubagent, AgentID: "subagent-fixed01", ParentRole: tools.RoleMain}, b.Identity)
	assert.Equal(t, ContextForked, b.ContextMode)
	assert.Equal(t, 4, b.ForkedMessageCount)
	assert.Equal(t, "find callers of Foo", b.Task)
	assert.Contains(t, toolResult(t, sub1.Messages, "c3"), "not_run_in_fork")
	assert.Equal(t, agent.RoleUser, sub1.Messages[6].Role)

	// Inside the subagent: read allowed, everything else denied without side effects.
	assert.Equal(t, "contents of pkg/bar.go", toolResult(t, sub2.Messages, "s1"))
	assert.Contains(t, toolResult(t, sub2.Messages, "s2"), "permission_denied")
	assert.Equal(t, 0, h.ask.runCount())
	for i, m := range h.mutating {
		assert.Contains(t, toolResult(t, sub2.Messages, fmt.Sprintf("m%d", i)), "permission_denied", m.name)
		assert.Equal(t, 0, m.runCount(), m.name)
		_, err := os.Stat(filepath.Join(h.dir, fmt.Sprintf("created-%d.txt", i)))
		assert.True(t, os.IsNotExist(err), "%s must not create a file", m.name)
	}
	nested := decodeResult(t, toolResult(t, sub2.Messages, "s3"))
	assert.Equal(t, StatusFailed, nested.Status)
	require.NotNil(t, nested.Error)
	assert.Equal(t, CodeNestedDelegation, nested.Error.Code)
	assert.Equal(t, "subagent-fixed01", nested.Identity.AgentID, "identity comes from the runner, not the model's claim")
	assert.Equal(t, tools.RoleSubagent, nested.Identity.Role)
	assert.Equal(t, 3, h.read.runCount(), "main.go and other.go by the parent, pkg/bar.go by the subagent")

	// The parent gets only the delegate_result, then continues.
	res := decodeResult(t, toolResult(t, parent2.Messages, "c2"))
	assert.Equal(t, "delegate_result", res.Type)
	assert.Equal(t, StatusCompleted, res.Status)
	assert.Equal(t, tools.Identity{Role: tools.RoleSubagent, AgentID: "subagent-fixed01", ParentRole: tools.RoleMain}, *res.Identity)
	assert.Equal(t, "Foo is called from bar.go.", res.Summary)
	assert.Equal(t, []Finding{{File: "pkg/bar.go", Line: 7, Claim: "bar calls Foo", Confidence: "high"}}, res.Findings)
	assert.Equal(t, []string{"go test ./pkg"}, res.TestsToRun)
	assert.Equal(t, "contents of other.go", toolResult(t, parent2.Messages, "c3"))
	assert.Len(t, parent2.Messages, 6, "system, user, assistant and its three results: no subagent message")
	all, err := json.Marshal(parent2.Messages)
	require.NoError(t, err)
	assert.NotContains(t, string(all), marker)
	convJSON, err := json.Marshal(conv)
	require.NoError(t, err)
	assert.NotContains(t, string(convJSON), marker)
	assert.NotContains(t, string(convJSON), "subagent_bootstrap")
	assert.Equal(t, "Foo is called from pkg/bar.go.", conv[len(conv)-1].Content)

	// Usage of both subagent calls went to the hook.
	assert.Len(t, h.usage, 2)

	// Activity bar: phases in order, final phase, nothing private.
	// Streaming shows each call as it is prepared, then each runs in order.
	want := []string{PhaseStarting, PhaseReasoning, PhaseReviewing}
	for _, c := range subCalls {
		want = append(want, c.Name)
	}
	for _, c := range subCalls {
		want = append(want, c.Name)
		if c.Name == Name {
			want = append(want, PhaseNested)
		}
	}
	want = append(want, PhaseReasoning, PhaseReviewing, StatusCompleted)
	assert.Equal(t, want, h.status.phases())
	st := h.status.all()
	last := st[len(st)-1]
	assert.True(t, last.Done)
	assert.Equal(t, "subagent-fixed01", last.AgentID)
	assert.Equal(t, "1 finding(s)", last.Detail)
	for i, s := range st {
		assert.NotContains(t, s.Phase+s.Detail, marker)
		assert.NotContains(t, s.Phase+s.Detail, "private")
		assert.Equal(t, i == len(st)-1, s.Done)
		if i > 0 {
			assert.GreaterOrEqual(t, s.Elapsed, st[i-1].Elapsed)
		}
	}
	assert.Contains(t, phaseDetails(st, "read_file"), "pkg/bar.go", "tool detail is the call summary")
}

func phaseDetails(st []agent.SubagentStatus, phase string) []string {
	var out []string
	for _, s := range st {
		if s.Phase == phase {
			out = append(out, s.Detail)
		}
	}
	return out
}

// TestDelegateEndsNormally runs a parent whose script continues after the
// delegate result, for every way a delegation can end badly.
func TestDelegateEndsNormally(t *testing.T) {
	var many []string
	for i := 0; i < 40; i++ {
		many = append(many, fmt.Sprintf(`{"file":"f%02d.go","line":%d,"claim":"%s","confidence":"medium"}`, i, i+1, strings.Repeat("long claim ", 10)))
	}
	oversized := `{"status":"completed","summary":"big","findings":[` + strings.Join(many, ",") + `]}`
	tests := []struct {
		name     string
		args     string
		sub      []step
		edit     func(*Config)
		status   string
		code     string
		summary  string
		uncert   string
		minTime  time.Duration
		check    func(t *testing.T, content string)
		subCalls int
	}{
		{name: "timeout without output", args: `{"task":"t","timeout_ms":1000}`,
			sub: []step{{reasoning: marker, block: true}}, status: StatusFailed, code: CodeTimeout, minTime: time.Second, subCalls: 1},
		{name: "timeout after some output", args: `{"task":"t","timeout_ms":1}`,
			sub:    []step{{content: `{"summary":"half way","findings":[{"file":"a.go","line":3,"claim":"c","confidence":"low"}]}`, block: true}},
			status: StatusPartial, code: CodeTimeout, summary: "half way", uncert: "stopped early", minTime: time.Second, subCalls: 1},
		{name: "timeout clamped to max", args: `{"task":"t","timeout_ms":600000}`, edit: func(c *Config) { c.MaxTimeout = time.Second },
			sub: []step{{block: true}}, status: StatusFailed, code: CodeTimeout, minTime: time.Second, subCalls: 1},
		{name: "provider failure", args: `{"task":"t"}`,
			sub:    []step{{err: &agent.ProviderError{Status: 500, Message: "upstream exploded"}}},
			status: StatusFailed, code: CodeProviderError, subCalls: 1,
			check: func(t *testing.T, c string) { assert.Contains(t, c, "upstream exploded") }},
		{name: "provider panic", args: `{"task":"t"}`,
			sub: []step{{panicWith: "boom"}}, status: StatusFailed, code: "subagent_error", subCalls: 1,
			check: func(t *testing.T, c string) { assert.Contains(t, c, "boom") }},
		{name: "malformed output", args: `{"task":"t"}`,
			sub: []step{{reasoning: marker, content: "Foo is in a.go, I think."}}, status: StatusPartial,
			summary: "Foo is in a.go, I think.", uncert: "did not return the required JSON", subCalls: 1},
		{name: "empty output", args: `{"task":"t"}`,
			sub: []step{{reasoning: marker}}, status: StatusFailed, code: CodeEmptyResult, subCalls: 1},
		{name: "oversized output", args: `{"task":"t"}`, edit: func(c *Config) { c.MaxResultBytes = 2000 },
			sub: []step{{content: oversized}}, status: StatusPartial, summary: "big", uncert: "cut to fit 2000 bytes", subCalls: 1,
			check: func(t *testing.T, c string) {
				assert.LessOrEqual(t, len(c), 2000)
				r := decodeResult(t, c)
				assert.NotEmpty(t, r.Findings)
				assert.Less(t, len(r.Findings), 40)
				assert.Equal(t, "f00.go", r.Findings[0].File)
			}},
		{name: "no final answer", args: `{"task":"t"}`, edit: func(c *Config) { c.MaxIterations = 2 },
			sub: []step{
				{calls: []agent.ToolCall{call("r1", "read_file", `{"path":"a.go"}`)}},
				{calls: []agent.ToolCall{call("r2", "read_file", `{"path":"b.go"}`)}},
			}, status: StatusFailed, code: CodeNoFinalAnswer, subCalls: 2},
		{name: "no final answer with notes", args: `{"task":"t"}`, edit: func(c *Config) { c.MaxIterations = 1 },
			sub: []step{
				{content: "So far: a.go looks relevant.", calls: []agent.ToolCall{call("r1", "read_file", `{"path":"a.go"}`)}},
			}, status: StatusPartial, code: CodeNoFinalAnswer, summary: "So far: a.go looks relevant.", subCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := []step{{calls: []agent.ToolCall{call("d1", "delegate", tt.args)}}}
			steps = append(steps, tt.sub...)
			steps = append(steps, step{content: "continuing without it"})
			h := newHarness(t, steps, tt.edit)

			start := time.Now()
			conv, err := h.parentLoop().Run(context.Background(), parentStart())
			elapsed := time.Since(start)
			require.NoError(t, err, "the parent continues")
			assert.GreaterOrEqual(t, elapsed, tt.minTime)
			assert.Less(t, elapsed, tt.minTime+5*time.Second)
			assert.Equal(t, "continuing without it", conv[len(conv)-1].Content)
			reqs := h.prov.requests()
			require.Len(t, reqs, 2+tt.subCalls)

			content := toolResult(t, reqs[len(reqs)-1].Messages, "d1")
			assert.NotContains(t, content, marker)
			r := decodeResult(t, content)
			assert.Equal(t, "delegate_result", r.Type)
			require.NotNil(t, r.Identity)
			assert.Equal(t, "subagent-fixed01", r.Identity.AgentID)
			assert.Equal(t, tt.status, r.Status)
			if tt.code != "" {
				require.NotNil(t, r.Error)
				assert.Equal(t, tt.code, r.Error.Code)
			}
			if tt.summary != "" {
				assert.Equal(t, tt.summary, r.Summary)
			}
			if tt.uncert != "" {
				assert.Contains(t, strings.Join(r.Uncertainties, "\n"), tt.uncert)
			}
			if tt.check != nil {
				tt.check(t, content)
			}
			st := h.status.all()
			require.NotEmpty(t, st)
			assert.Equal(t, tt.status, st[len(st)-1].Phase)
			assert.True(t, st[len(st)-1].Done)
			assert.GreaterOrEqual(t, st[len(st)-1].Elapsed, tt.minTime)
			for _, s := range st {
				assert.NotContains(t, s.Phase+s.Detail, marker)
			}
		})
	}
}

func TestDelegateCancelledByParent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	h := newHarness(t, []step{
		{calls: []agent.ToolCall{call("d1", "delegate", `{"task":"t"}`)}},
		{reasoning: marker, block: true, onRequest: func() { close(started) }},
	}, nil)
	go func() {
		<-started
		cancel()
	}()
	start := time.Now()
	conv, err := h.parentLoop().Run(ctx, parentStart())
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second, "cancellation reaches the subagent's request at once")
	assert.Len(t, h.prov.requests(), 2)

	r := decodeResult(t, toolResult(t, conv, "d1"))
	assert.Equal(t, StatusFailed, r.Status)
	require.NotNil(t, r.Error)
	assert.Equal(t, CodeCancelled, r.Error.Code)
	st := h.status.all()
	require.NotEmpty(t, st)
	assert.Equal(t, PhaseCancelled, st[len(st)-1].Phase)
	assert.True(t, st[len(st)-1].Done)

	// The busy flag is released once the subagent has stopped.
	assert.Eventually(t, func() bool { return !h.tool.busy.Load() }, 2*time.Second, 10*time.Millisecond)
}

func TestDelegateOneAtATime(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	h := newHarness(t, []step{{block: true, onRequest: func() { close(started) }}}, nil)
	first := make(chan tools.Result, 1)
	go func() {
		res, _ := h.tool.Run(ctx, tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, json.RawMessage(`{"task":"one"}`))
		first <- res
	}()
	<-started
	res, err := h.tool.Run(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, json.RawMessage(`{"task":"two"}`))
	require.NoError(t, err)
	r := decodeResult(t, res.Content)
	assert.Equal(t, StatusFailed, r.Status)
	require.NotNil(t, r.Error)
	assert.Equal(t, CodeBusy, r.Error.Code)
	assert.True(t, res.IsError)
	assert.Len(t, h.prov.requests(), 1, "the second call made no request")

	cancel()
	select {
	case res := <-first:
		assert.Contains(t, res.Content, CodeCancelled)
	case <-time.After(3 * time.Second):
		t.Fatal("the first delegation did not end after cancel")
	}
}

func TestDelegateWithoutParentLoop(t *testing.T) {
	h := newHarness(t, []step{{content: `{"summary":"done"}`}}, nil)
	res, err := h.tool.Run(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, CallID: "x1"},
		json.RawMessage(`{"task":"look"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, StatusCompleted, decodeResult(t, res.Content).Status)
	reqs := h.prov.requests()
	require.Len(t, reqs, 1)
	assertAllAnswered(t, reqs[0].Messages)
	assert.Contains(t, reqs[0].Messages[2].Content, ContextTaskOnly)
	assert.Equal(t, "low", reqs[0].Reasoning)
}

func TestDelegateInvalidArguments(t *testing.T) {
	h := newHarness(t, nil, nil)
	for _, args := range []string{`{}`, `{"task":"  "}`, `{"task":"t","mode":"write"}`, `{"task":"t","output_contract":"essay"}`,
		`{"task":"t","timeout_ms":-5}`, `{"task":"t","extra":1}`, `{"task":3}`} {
		t.Run(args, func(t *testing.T) {
			res, err := h.tool.Run(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, json.RawMessage(args))
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Content, "invalid_arguments")
		})
	}
	assert.Empty(t, h.prov.requests())
}

func TestNestedGuard(t *testing.T) {
	h := newHarness(t, nil, nil)
	id := tools.Identity{Role: tools.RoleSubagent, AgentID: "subagent-123", ParentRole: tools.RoleMain}
	for _, inv := range []tools.Invocation{
		{Identity: id, DelegationDepth: 1, CallID: "n1"},
		// A subagent claiming to be main still runs at depth 1.
		{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "subagent-123"}, DelegationDepth: 1},
	} {
		res := h.reg.Invoke(context.Background(), inv, Name, json.RawMessage(`{"task":"nested"}`))
		assert.True(t, res.IsError)
		r := decodeResult(t, res.Content)
		assert.Equal(t, StatusFailed, r.Status)
		assert.Equal(t, CodeNestedDelegation, r.Error.Code)
		assert.Equal(t, id, *r.Identity, "the depth decides: the caller is a subagent whatever it claims")
		// Run itself refuses too, should it ever be called without the registry.
		direct, err := h.tool.Run(context.Background(), inv, json.RawMessage(`{"task":"nested"}`))
		require.NoError(t, err)
		assert.Equal(t, res, direct)
	}
	assert.Empty(t, h.prov.requests(), "no nested provider request")
	assert.Empty(t, h.status.all(), "no subagent started")
}

func TestTimeoutClamp(t *testing.T) {
	tool := NewTool(Config{DefaultTimeout: 2 * time.Minute, MaxTimeout: 5 * time.Minute})
	for _, tc := range []struct {
		ms   int64
		want time.Duration
	}{{0, 2 * time.Minute}, {1, time.Second}, {1500, 1500 * time.Millisecond}, {10 * 60 * 1000, 5 * time.Minute}, {1 << 62, 5 * time.Minute}} {
		assert.Equal(t, tc.want, tool.timeout(Args{TimeoutMS: tc.ms}), "timeout_ms=%d", tc.ms)
	}
	d := NewTool(Config{})
	assert.Equal(t, DefaultTimeout, d.timeout(Args{}))
	assert.Equal(t, DefaultMaxTimeout, d.cfg.MaxTimeout)
	assert.Equal(t, DefaultMaxResultBytes, d.cfg.MaxResultBytes)
	assert.Regexp(t, `^subagent-[0-9a-f]{8}$`, d.cfg.NewID())
	assert.NotEqual(t, d.cfg.NewID(), d.cfg.NewID())
}

func TestDescriptionStatesTheContract(t *testing.T) {
	tool := NewTool(Config{})
	desc := tool.Description()
	for _, want := range []string{
		"synchronous, read-only subagent", "private fork (an independent snapshot)", "subagent_bootstrap",
		`role: "subagent"`, "unique agent_id", `parent_role: "main"`, "becomes this delegate tool result",
		"do not receive the subagent's private tool calls", "same tool catalog as you, unchanged",
		`status: "failed"`, "nested_delegation_forbidden", "expected runtime behaviour", "stable, cacheable tool catalog",
		"permission_denied", "You remain responsible", "verify", "When to delegate", "When not to",
	} {
		assert.Contains(t, desc, want)
	}
	assert.True(t, json.Valid(tool.Parameters()))
	assert.Equal(t, tools.Delegation, tool.Access())
}
