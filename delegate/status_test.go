package delegate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

func TestMonitor(t *testing.T) {
	clock := time.Unix(1000, 0)
	now := func() time.Time { return clock }
	var log statusLog
	var used []agent.Usage
	m := newMonitor("subagent-m1", now, log.add, func(u agent.Usage) { used = append(used, u) }, Name)

	m.ModelCall(1)
	clock = clock.Add(300 * time.Millisecond)
	m.Delta(agent.Delta{Kind: agent.DeltaReasoning, Text: "secret thoughts"})
	m.Delta(agent.Delta{Kind: agent.DeltaReasoning, Text: "more secret thoughts"}) // same phase: no update
	clock = clock.Add(time.Second)
	m.tick() // elapsed refresh, same phase
	m.Delta(agent.Delta{Kind: agent.DeltaContent, Text: "secret answer"})
	m.ToolCall(agent.ToolCall{ID: "a", Name: "read_file"}, "src/x.go\n12–40\x1b[31m and a very long tail that goes on and on and on and on and on")
	m.ToolCall(agent.ToolCall{ID: "b", Name: Name}, "nested secret task")
	m.ToolResult(agent.ToolCall{ID: "b", Name: Name}, tools.Result{Content: `{"error":{"code":"nested_delegation_forbidden"}}`})
	m.Usage(agent.Usage{Calls: 1, Input: 5})
	clock = clock.Add(time.Second)
	m.finish(StatusCompleted, "2 finding(s)")
	// Nothing changes after the final state.
	m.Delta(agent.Delta{Kind: agent.DeltaReasoning})
	m.tick()
	m.finish(StatusFailed, "x")

	st := log.all()
	require.Len(t, st, 8)
	type row struct {
		phase, detail string
		elapsed       time.Duration
		done          bool
	}
	var got []row
	for _, s := range st {
		assert.Equal(t, "subagent-m1", s.AgentID)
		got = append(got, row{s.Phase, s.Detail, s.Elapsed, s.Done})
	}
	assert.Equal(t, []row{
		{PhaseStarting, "waiting for the model", 0, false},
		{PhaseReasoning, "", 300 * time.Millisecond, false},
		{PhaseReasoning, "", 1300 * time.Millisecond, false},
		{PhaseReviewing, "writing the result", 1300 * time.Millisecond, false},
		{"read_file", got[4].detail, 1300 * time.Millisecond, false},
		{Name, "", 1300 * time.Millisecond, false},
		{PhaseNested, "", 1300 * time.Millisecond, false},
	}, got[:7])
	assert.Equal(t, row{StatusCompleted, "2 finding(s)", 2300 * time.Millisecond, true}, got[7])
	assert.Equal(t, "src/x.go 12–40[31m and a very long tail that goes on and on…", got[4].detail, "control characters dropped (text.Collapse)")
	for _, s := range st {
		assert.NotContains(t, s.Detail, "secret")
		assert.NotContains(t, s.Detail, "\n")
		assert.NotContains(t, s.Detail, "\x1b")
		assert.LessOrEqual(t, len([]rune(s.Detail)), maxDetailRunes+1)
	}
	assert.Equal(t, []agent.Usage{{Calls: 1, Input: 5}}, used)
	assert.Equal(t, agent.Usage{Calls: 1, Input: 5}, m.usageTotal())
	assert.Equal(t, "secret answer", m.answer())
}

func TestMonitorNilHooks(t *testing.T) {
	m := newMonitor("s", time.Now, nil, nil, Name)
	m.ModelCall(1)
	m.Usage(agent.Usage{Calls: 1})
	m.tick()
	m.finish(StatusFailed, "x")
	assert.Equal(t, 1, m.usageTotal().Calls)
}
