package delegate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

func parentConversation() []agent.Message {
	return []agent.Message{
		{Role: agent.RoleSystem, Content: "You are Fido."},
		{Role: agent.RoleUser, Content: "Find the bug."},
		{Role: agent.RoleAssistant, Content: "Looking.", ReasoningDetails: json.RawMessage(`[{"type":"reasoning.text","text":"r"}]`),
			ToolCalls: []agent.ToolCall{
				{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`},
				{ID: "c2", Name: "delegate", Arguments: `{"task":"map callers"}`},
				{ID: "c3", Name: "ripgrep", Arguments: `{"pattern":"x"}`},
			}},
		{Role: agent.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "package a"},
	}
}

// answeredCalls checks every assistant tool call has exactly one result after it.
func assertAllAnswered(t *testing.T, msgs []agent.Message) {
	t.Helper()
	results := map[string]int{}
	for _, m := range msgs {
		if m.Role == agent.RoleTool {
			results[m.ToolCallID]++
		}
	}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			assert.Equal(t, 1, results[c.ID], "call %s must have exactly one result", c.ID)
		}
	}
}

func TestBuildForkFromParent(t *testing.T) {
	parent := parentConversation()
	a := Args{Task: "map callers", Context: "keeps my context small", Scope: &Scope{Paths: []string{"a/"}, Symbols: []string{"Foo"}}}
	f := BuildFork(parent, true, testID, "delegate", "c2", a)

	require.Len(t, f.Messages, len(parent)+3)
	assert.Equal(t, parent, f.Messages[:len(parent)], "the fork extends the parent's messages unchanged")
	assertAllAnswered(t, f.Messages)

	boot := f.Messages[len(parent)]
	assert.Equal(t, agent.RoleTool, boot.Role)
	assert.Equal(t, "c2", boot.ToolCallID)
	assert.Equal(t, "delegate", boot.Name)
	assert.JSONEq(t, `{
		"type": "subagent_bootstrap",
		"identity": {"role": "subagent", "agent_id": "subagent-test1", "parent_role": "main"},
		"context_mode": "forked_parent_messages",
		"forked_message_count": 4,
		"task": "map callers",
		"context": "keeps my context small",
		"scope": {"paths": ["a/"], "symbols": ["Foo"]},
		"responsibility": "Inspect only; return the final result to the parent. You are not the main agent, you may not delegate, and the parent will verify your claims."
	}`, boot.Content)

	later := f.Messages[len(parent)+1]
	assert.Equal(t, "c3", later.ToolCallID)
	assert.Contains(t, later.Content, "not_run_in_fork")

	instr := f.Messages[len(parent)+2]
	assert.Equal(t, agent.RoleUser, instr.Role)
	for _, want := range []string{"subagent-test1", "map callers", "keeps my context small", "a/", "Foo",
		"read-only", "Inspect, do not implement", "Do not call delegate", `"findings"`, `"recommended_next_steps"`} {
		assert.Contains(t, instr.Content, want)
	}
}

func TestBuildForkIsolated(t *testing.T) {
	parent := parentConversation()
	f := BuildFork(parent, true, testID, "delegate", "c2", Args{Task: "t"})
	snapshot := agent.CloneMessages(f.Messages)

	// Mutate the parent in place and append to it: the fork does not change.
	parent[1].Content = "CHANGED"
	parent[2].ToolCalls[0].Arguments = "CHANGED"
	parent[2].ReasoningDetails[0] = 'X'
	parent = append(parent, agent.Message{Role: agent.RoleUser, Content: "later"})
	assert.Equal(t, snapshot, f.Messages)

	// Mutate the fork: the parent does not change.
	parentSnap := agent.CloneMessages(parent)
	f.Messages[0].Content = "FORK"
	f.Messages[2].ToolCalls[1].Name = "FORK"
	f.Messages[2].ReasoningDetails[1] = 'Y'
	assert.Equal(t, parentSnap, parent)
}

func TestBuildForkFindsCallByName(t *testing.T) {
	f := BuildFork(parentConversation(), true, testID, "delegate", "", Args{Task: "t"})
	assertAllAnswered(t, f.Messages)
	assert.Equal(t, "c2", f.Messages[4].ToolCallID)
	assert.Contains(t, f.Messages[4].Content, "subagent_bootstrap")
}

func TestBuildForkWithoutParent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parent []agent.Message
		ok     bool
	}{
		{"no loop", nil, false},
		{"empty", []agent.Message{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := BuildFork(tc.parent, tc.ok, testID, "delegate", "call_x", Args{Task: "t"})
			assertAllAnswered(t, f.Messages)
			require.Len(t, f.Messages, 4)
			assert.Equal(t, agent.RoleUser, f.Messages[0].Role)
			assert.Equal(t, agent.RoleAssistant, f.Messages[1].Role)
			require.Len(t, f.Messages[1].ToolCalls, 1)
			assert.Equal(t, "call_x", f.Messages[1].ToolCalls[0].ID)
			var b Bootstrap
			require.NoError(t, json.Unmarshal([]byte(f.Messages[2].Content), &b))
			assert.Equal(t, ContextTaskOnly, b.ContextMode)
			assert.Equal(t, 0, b.ForkedMessageCount)
			assert.NotEmpty(t, b.Note)
			assert.Equal(t, testID, b.Identity)
		})
	}
}

func TestBuildForkNoDelegateCallInParent(t *testing.T) {
	// A parent whose last assistant message has an unanswered call but no
	// delegate call (e.g. delegate run directly): that call gets a result and
	// an internal matching call carries the bootstrap.
	parent := []agent.Message{
		{Role: agent.RoleSystem, Content: "sys"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "k1", Name: "read_file", Arguments: "{}"}}},
	}
	f := BuildFork(parent, true, testID, "delegate", "", Args{Task: "t"})
	assertAllAnswered(t, f.Messages)
	assert.Equal(t, parent, f.Messages[:2])
	var b Bootstrap
	boot := f.Messages[len(f.Messages)-2]
	require.NoError(t, json.Unmarshal([]byte(boot.Content), &b))
	assert.Equal(t, ContextForked, b.ContextMode)
	assert.Equal(t, 2, b.ForkedMessageCount)
	assert.Equal(t, tools.RoleSubagent, b.Identity.Role)
}
