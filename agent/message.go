package agent

import "github.com/fido-nvim/fido/agent/conversation"

// The conversation's vocabulary is package conversation's (it saves it);
// the core speaks it under these names.
type (
	Role     = conversation.Role
	Message  = conversation.Message
	ToolCall = conversation.ToolCall
)

const (
	RoleSystem    = conversation.RoleSystem
	RoleUser      = conversation.RoleUser
	RoleAssistant = conversation.RoleAssistant
	RoleTool      = conversation.RoleTool
)

// CloneMessages deep-copies a message array.
func CloneMessages(ms []Message) []Message { return conversation.CloneMessages(ms) }
