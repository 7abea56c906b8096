package llmtest

import (
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// Request is one recorded chat-completions request.
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq          int
	Method, Path string
	// Proto is the HTTP version the request came in, e.g. "HTTP/2.0".
	Proto  string
	Header http.Header
	// Body is the raw request body, byte for byte.
	Body []byte
	// Chat is Body decoded; DecodeErr says why it could not be.
	Chat      ChatRequest
	DecodeErr error
}

// Get reads any field of the body with a gjson path, e.g. "reasoning.effort".
func (r Request) Get(path string) gjson.Result { return gjson.GetBytes(r.Body, path) }

// ChatRequest is the decoded form of a chat-completions body.
type ChatRequest struct {
	Model  string
	Stream bool
	// ReasoningEffort is reasoning.effort (OpenRouter) or reasoning_effort (OpenAI).
	ReasoningEffort string
	Messages        []Message
	Tools           []Tool
	// ToolsRaw is the exact bytes of the "tools" array ("" when absent), for
	// comparing the advertised tools across requests.
	ToolsRaw string
}

// Message is one decoded message of a request.
type Message struct {
	Role string
	// Content is the text; for multipart content, the text parts joined.
	Content string
	// HasContent reports whether the "content" key was present at all.
	HasContent       bool
	Reasoning        string
	ReasoningDetails string // raw JSON, "" when absent
	ToolCalls        []ToolCall
	ToolCallID       string
	Name             string
	// Raw is the message's JSON as sent.
	Raw string
}

// ToolCall is an assistant message's tool call.
type ToolCall struct {
	ID, Type, Name, Arguments string
}

// Tool is one advertised function tool.
type Tool struct {
	Type, Name, Description string
	// Parameters is the raw JSON schema.
	Parameters string
	Raw        string
}

// DecodeChatRequest decodes a chat-completions request body with gjson.
func DecodeChatRequest(body []byte) (ChatRequest, error) {
	if !gjson.ValidBytes(body) {
		return ChatRequest{}, errors.New("llmtest: request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	c := ChatRequest{
		Model:           root.Get("model").String(),
		Stream:          root.Get("stream").Bool(),
		ReasoningEffort: root.Get("reasoning.effort").String(),
	}
	if c.ReasoningEffort == "" {
		c.ReasoningEffort = root.Get("reasoning_effort").String()
	}
	for _, m := range root.Get("messages").Array() {
		msg := Message{
			Role:             m.Get("role").String(),
			Reasoning:        m.Get("reasoning").String(),
			ToolCallID:       m.Get("tool_call_id").String(),
			Name:             m.Get("name").String(),
			Raw:              m.Raw,
			ReasoningDetails: m.Get("reasoning_details").Raw,
		}
		if msg.Reasoning == "" {
			msg.Reasoning = m.Get("reasoning_content").String()
		}
		content := m.Get("content")
		msg.HasContent = content.Exists()
		if content.IsArray() {
			var parts []string
			for _, p := range content.Array() {
				if p.Get("type").String() == "text" {
					parts = append(parts, p.Get("text").String())
				}
			}
			msg.Content = strings.Join(parts, "")
		} else {
			msg.Content = content.String()
		}
		for _, tc := range m.Get("tool_calls").Array() {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{
				ID:        tc.Get("id").String(),
				Type:      tc.Get("type").String(),
				Name:      tc.Get("function.name").String(),
				Arguments: tc.Get("function.arguments").String(),
			})
		}
		c.Messages = append(c.Messages, msg)
	}
	if ts := root.Get("tools"); ts.Exists() {
		c.ToolsRaw = ts.Raw
		for _, t := range ts.Array() {
			c.Tools = append(c.Tools, Tool{
				Type:        t.Get("type").String(),
				Name:        t.Get("function.name").String(),
				Description: t.Get("function.description").String(),
				Parameters:  t.Get("function.parameters").Raw,
				Raw:         t.Raw,
			})
		}
	}
	return c, nil
}
