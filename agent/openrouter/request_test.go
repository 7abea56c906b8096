package openrouter

import (
	"encoding/json"
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// chatRequest is the whole request as one struct: go-openai's request with
// OpenRouter's fields beside it, Messages shadowing the embedded field.
// encodeRequest builds the same bytes from a cached head and the messages.
type chatRequest struct {
	openai.ChatCompletionRequest
	Messages  []message            `json:"messages"`
	Reasoning *reasoningConfig     `json:"reasoning,omitempty"`
	Provider  *ProviderPreferences `json:"provider,omitempty"`
}

func wholeRequest(req agent.Request, prefs *ProviderPreferences) ([]byte, error) {
	body := chatRequest{
		ChatCompletionRequest: openai.ChatCompletionRequest{
			Model:         req.Model,
			Tools:         encodeTools(req.Tools),
			Stream:        true,
			StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		},
		Messages: encodeMessages(req.Messages, NeedsCacheBreakpoints(req.Model)),
		Provider: prefs,
	}
	if req.Reasoning != "" {
		body.Reasoning = &reasoningConfig{Effort: req.Reasoning}
	}
	return marshalNoEscape(body)
}

func specsN(n int, tag string) []tools.Spec {
	var out []tools.Spec
	for i := range n {
		out = append(out, tools.Spec{Name: fmt.Sprintf("tool_%d", i), Description: "does <" + tag + "> & more",
			Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"x%d":{"type":"string"}}}`, i))})
	}
	return out
}

// The cached head and the messages make the bytes of the whole request,
// for every model, catalog, reasoning and routing, and a changed catalog
// is never answered from the cache.
func TestRequestFromCachedHeadIsTheWholeRequest(t *testing.T) {
	var heads headCache
	msgs := []agent.Message{{Role: agent.RoleSystem, Content: "sys <b>"}, {Role: agent.RoleUser, Content: "hi & bye"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "tool_0", Arguments: `{"x0":"a"}`}}},
		{Role: agent.RoleTool, ToolCallID: "c1", Content: "result"}}
	prefs := &ProviderPreferences{Sort: "price"}
	for round := range 3 {
		for _, model := range []string{"test/model", "anthropic/claude-sonnet-4", "google/gemini-2.5-pro"} {
			for _, specs := range [][]tools.Spec{nil, specsN(1, "a"), specsN(5, "a"), specsN(5, "b")} {
				for _, reasoning := range []string{"", "high"} {
					for _, p := range []*ProviderPreferences{nil, prefs} {
						req := agent.Request{Model: model, Messages: msgs, Tools: specs, Reasoning: reasoning}
						want, err := wholeRequest(req, p)
						require.NoError(t, err)
						got, err := encodeRequest(req, p, &heads)
						require.NoError(t, err)
						require.Equal(t, string(want), string(got), "round %d %s %d tools %q", round, model, len(specs), reasoning)
						require.True(t, json.Valid(got))
					}
				}
			}
		}
	}
	// The same contents in a new slice are found; changed contents are not.
	specs := specsN(3, "a")
	first, err := heads.head("m", specs)
	require.NoError(t, err)
	again, err := heads.head("m", specsN(3, "a"))
	require.NoError(t, err)
	assert.Same(t, &first[0], &again[0], "answered from the cache")
	specs[1].Description = "changed"
	changed, err := heads.head("m", specs)
	require.NoError(t, err)
	assert.Contains(t, string(changed), `"description":"changed"`)
}

func BenchmarkEncodeRequestWithCatalog(b *testing.B) {
	var heads headCache
	req := agent.Request{Model: "m", Tools: specsN(20, "x"), Messages: []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "hi"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRequest(req, nil, &heads); err != nil {
			b.Fatal(err)
		}
	}
}
