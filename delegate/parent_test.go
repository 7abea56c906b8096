package delegate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// The tool is built before its parent (the parent's registry holds it):
// until SetParent it answers that delegation is unavailable, and after it
// reads the parent at every call, so a subagent follows the parent's
// /model and /reasoning and gets the parent's tool-result hook.
func TestDelegateReadsTheParentAtEveryCall(t *testing.T) {
	h := newHarness(t, []step{{content: `{"status":"completed","summary":"one"}`}, {content: `{"status":"completed","summary":"two"}`}}, func(c *Config) { c.Parent = nil })
	inv := tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}, CallID: "c1"}
	res, err := h.tool.Run(context.Background(), inv, json.RawMessage(`{"task":"look"}`))
	require.NoError(t, err)
	assert.Contains(t, res.Content, CodeUnavailable)
	assert.Empty(t, h.prov.requests())

	hooked := 0
	parent := &testParent{reg: func() *tools.Registry { return h.reg }, model: "first/model", reasoning: "low",
		hook: func([]agent.Message) func(agent.ToolCall, tools.Result) tools.Result {
			hooked++
			return nil
		}}
	h.tool.SetParent(parent)
	_, err = h.tool.Run(context.Background(), inv, json.RawMessage(`{"task":"look"}`))
	require.NoError(t, err)
	parent.model, parent.reasoning = "second/model", "high"
	_, err = h.tool.Run(context.Background(), inv, json.RawMessage(`{"task":"look again"}`))
	require.NoError(t, err)
	reqs := h.prov.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "first/model", reqs[0].Model)
	assert.Equal(t, "low", reqs[0].Reasoning)
	assert.Equal(t, "second/model", reqs[1].Model)
	assert.Equal(t, "high", reqs[1].Reasoning)
	assert.Equal(t, 2, hooked, "each run asks the parent for its hook")
}
