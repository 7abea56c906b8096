package delegate

import (
	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// Parent is the conversation a subagent is forked from, as the delegate
// tool needs it; *agent.Session is one. It is read at every call, so a
// subagent follows the parent's /model, /reasoning and tool catalog.
type Parent interface {
	// Registry is the parent's registry: the subagent advertises and
	// invokes the very same tool objects (delegate among them).
	Registry() *tools.Registry
	// Model and Reasoning are the parent's now ("" effort: model default).
	Model() string
	Reasoning() string
	// SubagentStatus receives sanitized activity-bar updates: a fresh value
	// each, the last one of a run with Done set.
	SubagentStatus(*agent.SubagentStatus)
	// AddSubagentUsage receives the usage of every subagent model call.
	AddSubagentUsage(agent.Usage)
	// SubagentHook is the hook the subagent's tool results pass through
	// (nested AGENTS.md as the parent gets them), starting from what its
	// fork carries; nil: none.
	SubagentHook(fork []agent.Message) func(agent.ToolCall, tools.Result) tools.Result
}

var _ Parent = (*agent.Session)(nil)

// parentRef boxes a Parent for atomic.Pointer.
type parentRef struct{ Parent }

// SetParent attaches the tool to its parent conversation. The composition
// root builds the tool before the session (the session's registry holds
// the tool), so it attaches the session once it exists; until then, and
// without a parent, delegation answers that it is unavailable.
func (t *Tool) SetParent(p Parent) {
	if p == nil {
		t.parent.Store(nil)
		return
	}
	t.parent.Store(&parentRef{p})
}

// parentNow is the attached parent, nil when none.
func (t *Tool) parentNow() Parent {
	if r := t.parent.Load(); r != nil {
		return r.Parent
	}
	return nil
}
