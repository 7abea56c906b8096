package conversation

import "encoding/json"

// Role of a chat message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is an assistant's request to run a tool.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one entry of the conversation, in provider-neutral form.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Reasoning is the assistant's reasoning text, sent back so providers keep their cache.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningDetails are OpenRouter's structured reasoning blocks, passed back unmodified.
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// Turn numbers a user message that started a turn (from 1, per
	// conversation; 0 for synthetic messages) and Time is when it was sent
	// (RFC 3339). Both are Fido's bookkeeping for /rewind: never sent to
	// the provider.
	Turn int    `json:"turn,omitempty"`
	Time string `json:"time,omitempty"`
}

// Clone returns a deep copy of m: no slice is shared with the original.
func (m Message) Clone() Message {
	c := m
	if m.ToolCalls != nil {
		c.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
	}
	if m.ReasoningDetails != nil {
		c.ReasoningDetails = append(json.RawMessage(nil), m.ReasoningDetails...)
	}
	return c
}

// CloneMessages deep-copies a message array.
func CloneMessages(ms []Message) []Message {
	if ms == nil {
		return nil
	}
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out
}
