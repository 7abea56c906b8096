package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/agent/openrouter"
	"github.com/fido-nvim/fido/tools"
)

// changingCatalog returns a different tool list on every call, as MCP
// servers that come up late or change their tools do.
type changingCatalog struct {
	mu    sync.Mutex
	calls int
}

func (c *changingCatalog) Catalog(context.Context) ([]tools.Tool, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	var out []tools.Tool
	for i := 1; i <= c.calls; i++ {
		out = append(out, agent.NewEchoTool(fmt.Sprintf("mcp__s__t%d", i)))
	}
	return out, []string{fmt.Sprintf("catalog %d taken", c.calls)}
}

// The catalog is fixed at a conversation's first request: every later
// request advertises the same bytes, the built-in tools come first and keep
// their bytes, and only ResetTools (/mcp reload) takes a new catalog.
func TestCatalogFixedPerConversation(t *testing.T) {
	srv := llmtest.NewServer(t)
	builtin, err := tools.NewRegistry(agent.NewEchoTool("zeta"), agent.NewEchoTool("alpha"))
	require.NoError(t, err)
	cat := &changingCatalog{}
	provider := openrouter.New(openrouter.Config{BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1})
	s, ui := agent.NewTestSession(t, provider, agent.SessionConfig{Registry: builtin, Catalog: cat})

	srv.Enqueue(llmtest.Reply().ToolCall("c1", "mcp__s__t1", `{"text":"x"}`, 1).Finish("tool_calls"), llmtest.Text("one"))
	s.Submit("first")
	agent.WaitIdle(t, s)
	srv.Enqueue(llmtest.Text("two"))
	s.Submit("second")
	agent.WaitIdle(t, s)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.Equal(t, reqs[0].Get("tools").Raw, r.Get("tools").Raw, "request %d", i)
	}
	var names []string
	for _, n := range reqs[0].Get("tools.#.function.name").Array() {
		names = append(names, n.String())
	}
	assert.Equal(t, []string{"alpha", "zeta", "mcp__s__t1"}, names)
	assert.Equal(t, 1, cat.calls)
	assert.Contains(t, strings.Join(ui.Events(), "\n"), "notice catalog 1 taken")
	assert.Equal(t, []string{"alpha", "zeta", "mcp__s__t1"}, s.Registry().Names())

	s.ResetTools()
	srv.Enqueue(llmtest.Text("three"))
	s.Submit("third")
	agent.WaitIdle(t, s)
	reqs = srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, 2, cat.calls)
	assert.Len(t, reqs[3].Get("tools").Array(), 4)
	builtinBytes := reqs[0].Get("tools.0").Raw + reqs[0].Get("tools.1").Raw
	assert.Equal(t, builtinBytes, reqs[3].Get("tools.0").Raw+reqs[3].Get("tools.1").Raw, "built-in tools keep their bytes")
}
