package openrouter

import (
	"bytes"
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// chatRequest is the body of one chat-completions call: go-openai's request
// (model, stream, stream_options, tools) with OpenRouter's fields beside it.
// Messages shadows the embedded field of the same name, so the messages are
// encoded in Fido's form (reasoning passed back, cache_control parts).
type chatRequest struct {
	openai.ChatCompletionRequest
	Messages  []message            `json:"messages"`
	Reasoning *reasoningConfig     `json:"reasoning,omitempty"`
	Provider  *ProviderPreferences `json:"provider,omitempty"`
}

// reasoningConfig is OpenRouter's unified reasoning setting.
type reasoningConfig struct {
	Effort string `json:"effort"`
}

// ProviderPreferences is OpenRouter's provider routing ("provider" in the
// request); the zero value of each field leaves OpenRouter's default.
type ProviderPreferences struct {
	// Order lists provider slugs to try first, in order.
	Order []string `json:"order,omitempty"`
	// AllowFallbacks false keeps the request on the providers in Order.
	AllowFallbacks *bool `json:"allow_fallbacks,omitempty"`
	// RequireParameters routes only to providers that support every
	// parameter of the request (tools, reasoning).
	RequireParameters bool `json:"require_parameters,omitempty"`
	// DataCollection "deny" excludes providers that may store prompts.
	DataCollection string `json:"data_collection,omitempty"`
	// Sort is "price", "throughput" or "latency".
	Sort string `json:"sort,omitempty"`
}

// message is one request message. Content is a string, a one-part array
// carrying cache_control, or absent (nil) on an assistant message that only
// calls tools; every other message carries it, even empty.
type message struct {
	Role             string            `json:"role"`
	Content          any               `json:"content,omitempty"`
	Reasoning        string            `json:"reasoning,omitempty"`
	ReasoningDetails json.RawMessage   `json:"reasoning_details,omitempty"`
	ToolCalls        []openai.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
}

// contentPart is a text part with an optional cache breakpoint.
type contentPart struct {
	openai.ChatMessagePart
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// emptyParameters is the schema sent for a tool that declares none.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest builds the request body. Identical requests give identical
// bytes: struct fields encode in a fixed order, tools in spec order.
func encodeRequest(req agent.Request, prefs *ProviderPreferences) ([]byte, error) {
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

func encodeTools(specs []tools.Spec) []openai.Tool {
	if len(specs) == 0 {
		return nil
	}
	out := make([]openai.Tool, len(specs))
	for i, s := range specs {
		params := json.RawMessage(s.Parameters)
		if len(params) == 0 {
			params = emptyParameters
		}
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: s.Name, Description: s.Description, Parameters: params,
		}}
	}
	return out
}

func encodeMessages(msgs []agent.Message, caching bool) []message {
	out := make([]message, len(msgs))
	for i, m := range msgs {
		wm := message{Role: string(m.Role)}
		// An empty tool result must still carry its content; an assistant
		// message that only calls tools may leave it out.
		if m.Content != "" || !(m.Role == agent.RoleAssistant && len(m.ToolCalls) > 0) {
			wm.Content = m.Content
		}
		switch m.Role {
		case agent.RoleAssistant:
			wm.Reasoning = m.Reasoning
			if len(m.ReasoningDetails) > 0 && json.Valid(m.ReasoningDetails) {
				wm.ReasoningDetails = m.ReasoningDetails
			}
			for _, tc := range m.ToolCalls {
				wm.ToolCalls = append(wm.ToolCalls, openai.ToolCall{
					ID:       tc.ID,
					Type:     openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: tc.Name, Arguments: nonEmptyArgs(tc.Arguments)},
				})
			}
		case agent.RoleTool:
			wm.ToolCallID = m.ToolCallID
		}
		out[i] = wm
	}
	if caching {
		addCacheBreakpoints(out, msgs)
	}
	return out
}

// NeedsCacheBreakpoints reports models whose upstream caches a prompt
// prefix only at explicit cache_control breakpoints when reached through
// OpenRouter (Anthropic's Claude, Google's Gemini). Others cache on their own
// and get no cache_control at all.
func NeedsCacheBreakpoints(model string) bool {
	return strings.HasPrefix(model, "anthropic/") || strings.HasPrefix(model, "google/gemini")
}

// maxCacheBreakpoints is Anthropic's limit of cache_control breakpoints.
const maxCacheBreakpoints = 4

// addCacheBreakpoints marks the system message and the newest user and tool
// messages (at most maxCacheBreakpoints in all) with cache_control
// {type: ephemeral}, their text becoming one content part: the text itself,
// and so the cached prefix, keeps its bytes.
func addCacheBreakpoints(wire []message, msgs []agent.Message) {
	mark := func(i int) bool {
		text, _ := wire[i].Content.(string)
		if text == "" {
			return false
		}
		wire[i].Content = []contentPart{{
			ChatMessagePart: openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text},
			CacheControl:    &cacheControl{Type: "ephemeral"},
		}}
		return true
	}
	left := maxCacheBreakpoints
	if len(msgs) > 0 && msgs[0].Role == agent.RoleSystem && mark(0) {
		left--
	}
	// The newest messages: the next request reads everything up to them
	// from the cache.
	for i := len(msgs) - 1; i > 0 && left > 1; i-- {
		if msgs[i].Role == agent.RoleUser || msgs[i].Role == agent.RoleTool {
			if mark(i) {
				left--
			}
		}
	}
}

// nonEmptyArgs maps the empty arguments some models send for parameterless
// tools to "{}", which every provider accepts when it is sent back.
func nonEmptyArgs(a string) string {
	if strings.TrimSpace(a) == "" {
		return "{}"
	}
	return a
}

// marshalNoEscape encodes v without HTML escaping (<, > and & stay as they
// are) and without the encoder's trailing newline.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
