package openrouter

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

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
// bytes: struct fields encode in a fixed order, tools in spec order. The
// body is the request's head (model, stream options, tools: what every call
// of a conversation repeats, cached in heads) followed by its messages; the
// two together are the bytes chatRequest encodes to.
func encodeRequest(req agent.Request, prefs *ProviderPreferences, heads *headCache) ([]byte, error) {
	head, err := heads.head(req.Model, req.Tools)
	if err != nil {
		return nil, err
	}
	tail := requestTail{Messages: encodeMessages(req.Messages, NeedsCacheBreakpoints(req.Model)), Provider: prefs}
	if req.Reasoning != "" {
		tail.Reasoning = &reasoningConfig{Effort: req.Reasoning}
	}
	rest, err := marshalNoEscape(tail)
	if err != nil {
		return nil, err
	}
	// {head…} + {tail…} → {head…,tail…}
	body := make([]byte, 0, len(head)+len(rest))
	body = append(body, head[:len(head)-1]...)
	body = append(body, ',')
	return append(body, rest[1:]...), nil
}

// requestHead is a request without its messages; its Messages field
// shadows (and leaves out) the embedded one.
type requestHead struct {
	openai.ChatCompletionRequest
	Messages *struct{} `json:"messages,omitempty"`
}

// requestTail is the rest of chatRequest, from the messages on.
type requestTail struct {
	Messages  []message            `json:"messages"`
	Reasoning *reasoningConfig     `json:"reasoning,omitempty"`
	Provider  *ProviderPreferences `json:"provider,omitempty"`
}

// encodeHead encodes a request's head.
func encodeHead(model string, specs []tools.Spec) ([]byte, error) {
	return marshalNoEscape(requestHead{ChatCompletionRequest: openai.ChatCompletionRequest{
		Model:         model,
		Tools:         encodeTools(specs),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}})
}

// headCache keeps the last few encoded request heads. Every call of a
// conversation (and of its subagents) repeats the model and the tool
// catalog, and encoding the catalog (some 40 KB of schemas, each compacted
// again by encoding/json) cost more than the rest of a request. An entry
// is used only for the same model and tools with the same contents, so a
// catalog that changes (an MCP server came up) is encoded anew.
type headCache struct {
	mu      sync.Mutex
	entries [4]headEntry
	next    int
}

type headEntry struct {
	model string
	tools []tools.Spec
	head  []byte
}

func (c *headCache) head(model string, specs []tools.Spec) ([]byte, error) {
	if c == nil {
		return encodeHead(model, specs)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.head != nil && e.model == model && sameSpecs(e.tools, specs) {
			return e.head, nil
		}
	}
	head, err := encodeHead(model, specs)
	if err != nil {
		return nil, err
	}
	// The entry keeps its own copy: a caller's slice may change later.
	kept := make([]tools.Spec, len(specs))
	for i, sp := range specs {
		kept[i] = sp
		kept[i].Parameters = bytes.Clone(sp.Parameters)
	}
	c.entries[c.next] = headEntry{model: model, tools: kept, head: head}
	c.next = (c.next + 1) % len(c.entries)
	return head, nil
}

// sameSpecs compares two catalogs by content (quickly when they share
// their strings and bytes, as the same registry's do).
func sameSpecs(a, b []tools.Spec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
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
