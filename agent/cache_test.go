package agent_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/agent/openrouter"
	"github.com/fido-nvim/fido/tools"
)

// Claude and Gemini models get cache_control breakpoints (the system message
// as one content part, and the newest user/tool messages, at most 4); other
// models none. The system text and the tools keep their bytes across
// requests, and cache writes are counted.
func TestCacheBreakpointsForClaudeAndGemini(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  bool
	}{{"anthropic/claude-sonnet-4.5", true}, {"google/gemini-2.5-pro", true}, {"openai/gpt-5", false}, {"xiaomi/mimo-v2.6-flash", false}} {
		t.Run(tc.model, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			reg, err := tools.NewRegistry(agent.NewEchoTool("echo"))
			require.NoError(t, err)
			provider := openrouter.New(openrouter.Config{BaseURL: srv.URL(), APIKey: "test-key", MaxRetries: -1})
			s, _ := agent.NewTestSession(t, provider, agent.SessionConfig{Registry: reg, Model: tc.model})
			for i := 0; i < 3; i++ {
				srv.Enqueue(
					llmtest.Reply().ToolCall(fmt.Sprint("c", i), "echo", `{"text":"x"}`, 1).Finish("tool_calls").
						Raw(`data: {"id":"u","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":40,"cache_write_tokens":60},"cost":0.01}}`+"\n\n"),
					llmtest.Text(fmt.Sprint("ok ", i)),
				)
				s.Submit(fmt.Sprint("turn ", i))
				agent.WaitIdle(t, s)
			}
			reqs := srv.Requests()
			require.Len(t, reqs, 6)
			sysText := func(r llmtest.Request) string {
				c := r.Get("messages.0.content")
				if c.IsArray() {
					return c.Get("0.text").String()
				}
				return c.String()
			}
			for i, r := range reqs {
				assert.Equal(t, sysText(reqs[0]), sysText(r), "system text of request %d", i)
				assert.Equal(t, reqs[0].Get("tools").Raw, r.Get("tools").Raw, "tools of request %d", i)
				marks := 0
				r.Get("messages").ForEach(func(_, m gjson.Result) bool {
					m.Get("content").ForEach(func(_, p gjson.Result) bool {
						if p.Get("cache_control.type").String() == "ephemeral" {
							marks++
						}
						return true
					})
					return true
				})
				if tc.want {
					assert.Equal(t, "ephemeral", r.Get("messages.0.content.0.cache_control.type").String())
					assert.GreaterOrEqual(t, marks, 2)
					assert.LessOrEqual(t, marks, 4)
					last := r.Get("messages.@reverse.0.content")
					assert.True(t, last.IsArray(), "the newest message is a breakpoint")
				} else {
					assert.Zero(t, marks)
					assert.NotContains(t, string(r.Body), "cache_control")
				}
			}
			total, _ := s.Totals()
			assert.Equal(t, int64(180), total.CacheWrite, "cache writes counted from the usage chunks")
		})
	}
}
