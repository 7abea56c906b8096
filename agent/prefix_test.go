package agent_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/agent/openrouter"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// Over the wire, through the real provider: messages[0] and the tool
// list are byte-identical across many turns and 50 plan updates, the plan
// never enters the system message, and a restarted session restores the
// complete plan as a tool result right after the system message.
func TestPrefixStableAcrossPlanUpdatesOverHTTP(t *testing.T) {
	srv := llmtest.NewServer(t)
	statePath := filepath.Join(t.TempDir(), "plan.json")
	store, notice, err := plan.OpenStore(statePath)
	require.NoError(t, err)
	require.Empty(t, notice)

	var shown []plan.Plan
	reg, err := tools.NewRegistry(agent.NewEchoTool("echo"), plan.NewUpdateTool(store, func(p plan.Plan) { shown = append(shown, p) }))
	require.NoError(t, err)
	provider := openrouter.New(openrouter.Config{BaseURL: srv.URL(), APIKey: "test-key", MaxRetries: -1})
	newSession := func() *agent.Session {
		s, _ := agent.NewTestSession(t, provider, agent.SessionConfig{Registry: reg, Plans: store,
			SystemPrompt: func() string {
				return agent.BuildSystemPrompt(agent.PromptInput{Root: "/w", Listing: "go.mod\nmain.go\n", ToolNames: reg.Names()})
			}})
		return s
	}
	s := newSession()

	const updates = 50
	for i := 1; i <= updates; i++ {
		args := fmt.Sprintf(`{"reason":"step %d","items":[{"id":"inspect","title":"Inspect","status":"done","evidence":["read main.go"]},{"id":"impl","title":"Implement %d","status":"in_progress","next_action":"patch main.go","dependencies":["inspect"]}]}`, i, i)
		srv.Enqueue(
			llmtest.Reply().Reasoning("planning").ToolCall(fmt.Sprint("c", i), "update_plan", args, 3).Finish("tool_calls").Usage(100, 10, 50, 0.001),
			llmtest.Text(fmt.Sprint("ok ", i)),
		)
		s.Submit(fmt.Sprint("turn ", i))
		agent.WaitIdle(t, s)
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 2*updates)
	first0 := reqs[0].Get("messages.0").Raw
	firstTools := reqs[0].Get("tools").Raw
	require.NotEmpty(t, firstTools)
	for i, r := range reqs {
		require.Equal(t, first0, r.Get("messages.0").Raw, "messages[0] of request %d", i)
		require.Equal(t, firstTools, r.Get("tools").Raw, "tools of request %d", i)
		assert.NotContains(t, r.Get("messages.0.content").String(), "Implement", "no plan in the system message")
	}
	// The last tool result the model saw is the complete plan.
	last := reqs[len(reqs)-1]
	msgs := last.Get("messages").Array()
	res := msgs[len(msgs)-1]
	require.Equal(t, "tool", res.Get("role").String())
	var p plan.Plan
	require.NoError(t, json.Unmarshal([]byte(res.Get("content").String()), &p))
	assert.Equal(t, updates, p.Version)
	assert.Equal(t, []string{"read main.go"}, p.Items[0].Evidence)
	assert.Equal(t, "patch main.go", p.Items[1].NextAction)
	assert.Len(t, shown, updates)

	// Restart: a new session restores the plan as a tool result after messages[0].
	s.Close()
	store2, _, err := plan.OpenStore(statePath)
	require.NoError(t, err)
	store = store2
	s2 := newSession()
	srv.Enqueue(llmtest.Text("restored"))
	s2.Submit("where were we?")
	agent.WaitIdle(t, s2)
	reqs, err = srv.WaitRequests(2*updates+1, 2*time.Second)
	require.NoError(t, err)
	r := reqs[len(reqs)-1]
	assert.Equal(t, first0, r.Get("messages.0").Raw, "a new session builds the same system message")
	assert.Equal(t, "update_plan", r.Get("messages.1.tool_calls.0.function.name").String())
	assert.Equal(t, r.Get("messages.1.tool_calls.0.id").String(), r.Get("messages.2.tool_call_id").String())
	var restored plan.Plan
	require.NoError(t, json.Unmarshal([]byte(r.Get("messages.2.content").String()), &restored))
	assert.Equal(t, p, restored, "the restored snapshot is the complete plan")
}
