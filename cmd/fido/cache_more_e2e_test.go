package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// A subagent's requests carry the same cache_control breakpoints as its
// parent's with a Claude model, and the same tool bytes, so a delegation
// reads the parent's cached prefix instead of writing its own.
func TestE2ESubagentRequestsCarryCacheBreakpoints(t *testing.T) {
	f := startFidoEnv(t, "", []string{"FIDO_MODEL=anthropic/claude-sonnet-4.5"})
	srv := f.srv
	srv.Enqueue(
		llmtest.Reply().ToolCall("call_d", "delegate", `{"task":"find the config loader"}`, 1).Finish("tool_calls"),
		llmtest.Text("It is in config.go."),
		llmtest.Text("Done."),
	)
	require.NoError(t, f.Command("Fido where is the config loaded?"))
	f.waitIdleAfter(t, 3)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	parent, sub := reqs[0], reqs[1]
	require.Contains(t, sub.Get("messages").Raw, "find the config loader", "request 1 is the subagent's")
	for name, r := range map[string]llmtest.Request{"parent": parent, "subagent": sub} {
		assert.Equal(t, "ephemeral", r.Get("messages.0.content.0.cache_control.type").String(), "%s: the system message is a breakpoint", name)
		n := 0
		r.Get("messages.#.content.#.cache_control").ForEach(func(_, v gjson.Result) bool {
			n += len(v.Array())
			return true
		})
		assert.LessOrEqual(t, n, 4, "%s: at most 4 breakpoints", name)
	}
	assert.Equal(t, parent.Get("tools").Raw, sub.Get("tools").Raw, "the subagent advertises the same tool bytes")
	assert.Equal(t, parent.Get("messages.0").Raw, sub.Get("messages.0").Raw, "and the same system message")
}
