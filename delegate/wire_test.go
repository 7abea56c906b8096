package delegate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/agent/openrouter"
	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/files"
	"github.com/fido-nvim/fido/tools/workspace"
)

// TestDelegateOnTheWire drives the real OpenRouter provider and the real
// workspace tools against the fake server, and compares request bytes.
func TestDelegateOnTheWire(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "pkg", "bar.go"), []byte("package pkg // "+marker+"\nfunc bar() { Foo() }\n"), 0o644))
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)

	srv := llmtest.NewServer(t)
	prov := openrouter.New(openrouter.Config{BaseURL: srv.URL(), APIKey: "test-key", MaxRetries: -1})
	var usage []agent.Usage
	var reg *tools.Registry
	dt := NewTool(Config{Provider: prov, NewID: func() string { return "subagent-wire01" }})
	dt.SetParent(&testParent{reg: func() *tools.Registry { return reg }, model: "test/model", reasoning: "low",
		usage: func(u agent.Usage) { usage = append(usage, u) }})
	reg, err = tools.NewRegistry(append(files.Tools(ws), dt)...)
	require.NoError(t, err)

	srv.Enqueue(
		llmtest.Reply().Role().Reasoning("I will delegate.").
			ToolCall("c1", "delegate", `{"task":"find callers of Foo","scope":{"paths":["pkg/"]}}`, 3).
			Finish("tool_calls").Usage(100, 10, 0, 0.001),
		llmtest.Reply().Role().Reasoning("secret plan "+marker).
			ToolCall("s1", "read_file", `{"path":"pkg/bar.go"}`, 2).
			ToolCall("s2", "patch", `{"operations":[{"path":"new.txt","content":"x"}]}`, 1).
			ToolCall("s3", "mkdir", `{"path":"newdir"}`, 1).
			ToolCall("s4", "rm", `{"path":"pkg/bar.go"}`, 1).
			ToolCall("s5", "delegate", `{"task":"nested `+marker+`"}`, 1).
			Finish("tool_calls").Usage(200, 20, 100, 0.002),
		llmtest.Reply().Role().Content(`{"status":"completed","summary":"bar calls Foo.","findings":[{"file":"pkg/bar.go","line":2,"claim":"bar calls Foo","confidence":"high"}]}`).
			Finish("stop").Usage(300, 30, 200, 0.003),
		llmtest.Text("Foo is called by bar in pkg/bar.go."),
	)
	loop := &agent.Loop{Provider: prov, Registry: reg, Model: "test/model", Reasoning: "low", MaxIterations: 5,
		Invocation: tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}}}
	conv, err := loop.Run(context.Background(), []agent.Message{
		{Role: agent.RoleSystem, Content: "You are Fido."},
		{Role: agent.RoleUser, Content: "Who calls Foo?"},
	})
	require.NoError(t, err)
	assert.Equal(t, "Foo is called by bar in pkg/bar.go.", conv[len(conv)-1].Content)

	reqs := srv.Requests()
	require.Len(t, reqs, 4, "the nested delegate made no request")
	for _, r := range reqs {
		require.NoError(t, r.DecodeErr)
	}
	parent1, sub1, sub2, parent2 := reqs[0].Chat, reqs[1].Chat, reqs[2].Chat, reqs[3].Chat

	// Byte-identical advertised tools, delegate included, in every request.
	require.NotEmpty(t, parent1.ToolsRaw)
	assert.Contains(t, parent1.ToolsRaw, `"delegate"`)
	for _, c := range []llmtest.ChatRequest{sub1, sub2, parent2} {
		assert.Equal(t, parent1.ToolsRaw, c.ToolsRaw)
	}
	// Shared prefix: the subagent's request starts with the parent's bytes,
	// including the assistant message that called delegate.
	require.Greater(t, len(sub1.Messages), len(parent1.Messages)+1)
	for i, m := range parent1.Messages {
		assert.Equal(t, m.Raw, sub1.Messages[i].Raw, "message %d", i)
	}
	assert.Equal(t, parent2.Messages[2].Raw, sub1.Messages[2].Raw)
	assert.Equal(t, "c1", sub1.Messages[3].ToolCallID)
	assert.Contains(t, sub1.Messages[3].Content, `"type":"subagent_bootstrap"`)
	assert.Contains(t, sub1.Messages[3].Content, `"identity":{"role":"subagent","agent_id":"subagent-wire01","parent_role":"main"}`)
	assert.Contains(t, sub1.Messages[3].Content, `"forked_message_count":3`)

	// Read allowed; patch, mkdir, rm denied with no side effect; nested refused.
	byID := map[string]string{}
	for _, m := range sub2.Messages {
		if m.Role == "tool" {
			byID[m.ToolCallID] = m.Content
		}
	}
	assert.Contains(t, byID["s1"], "func bar()")
	for _, id := range []string{"s2", "s3", "s4"} {
		assert.Contains(t, byID[id], "permission_denied", id)
	}
	assert.Contains(t, byID["s5"], CodeNestedDelegation)
	assert.NoFileExists(t, filepath.Join(root, "new.txt"))
	assert.NoDirExists(t, filepath.Join(root, "newdir"))
	assert.FileExists(t, filepath.Join(root, "pkg", "bar.go"))

	// The parent's next request carries only the delegate_result.
	assert.Len(t, parent2.Messages, 4)
	assert.Contains(t, parent2.Messages[3].Content, `"type":"delegate_result"`)
	assert.Contains(t, parent2.Messages[3].Content, `"agent_id":"subagent-wire01"`)
	assert.NotContains(t, string(reqs[3].Body), marker)
	assert.NotContains(t, string(reqs[3].Body), "secret plan")
	for _, m := range parent2.Messages {
		assert.NotContains(t, m.Raw, "subagent_bootstrap")
	}

	require.Len(t, usage, 2)
	assert.Equal(t, agent.Usage{Calls: 2, Input: 500, Output: 50, CacheRead: 300, Cost: 0.005}, usage[0].Add(usage[1]))
}
