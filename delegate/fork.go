package delegate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// Context modes of the bootstrap result.
const (
	// ContextForked: the subagent works from a fork of the parent's messages.
	ContextForked = "forked_parent_messages"
	// ContextTaskOnly: no parent conversation was available (delegate called
	// outside a running loop); the subagent has only the task.
	ContextTaskOnly = "task_only"
)

const responsibility = "Inspect only; return the final result to the parent. You are not the main agent, you may not delegate, and the parent will verify your claims."

// notRunInFork answers calls the parent made after delegate in the same
// message: the parent runs them, the fork only needs a valid history.
const notRunInFork = `{"error":{"code":"not_run_in_fork","message":"This call belongs to the parent agent and was not run in this subagent's fork."}}`

// Scope narrows what the subagent investigates; it does not cut the fork.
type Scope struct {
	Paths   []string `json:"paths,omitempty" jsonschema:"Workspace-relative files or directories to start from."`
	Symbols []string `json:"symbols,omitempty" jsonschema:"Functions, types or identifiers to focus on."`
}

// Bootstrap is the subagent_bootstrap tool result: it tells the subagent who
// it is and how to return its work.
type Bootstrap struct {
	Type               string         `json:"type"`
	Identity           tools.Identity `json:"identity"`
	ContextMode        string         `json:"context_mode"`
	ForkedMessageCount int            `json:"forked_message_count"`
	Task               string         `json:"task"`
	Context            string         `json:"context,omitempty"`
	Scope              *Scope         `json:"scope,omitempty"`
	Responsibility     string         `json:"responsibility"`
	Note               string         `json:"note,omitempty"`
}

// Fork is the subagent's private message array and what it was built from.
type Fork struct {
	Messages  []agent.Message
	Bootstrap Bootstrap
}

// BuildFork makes the subagent's context. parent is the parent's conversation
// at the instant of the call (it is deep-copied again here, so neither side
// can ever reach the other's slices); ok is false when no parent conversation
// exists. Every tool call of the fork's last assistant message gets a result:
// the delegate call (callID, else the first unanswered call named toolName)
// is answered by the bootstrap, later calls by a short "not run" result. The
// instructions follow as a user message, so messages[0] stays the parent's
// system message byte for byte.
func BuildFork(parent []agent.Message, ok bool, id tools.Identity, toolName, callID string, a Args) Fork {
	msgs := agent.CloneMessages(parent)
	b := Bootstrap{
		Type: "subagent_bootstrap", Identity: id, ContextMode: ContextForked,
		ForkedMessageCount: len(msgs), Task: a.Task, Context: a.Context,
		Responsibility: responsibility,
	}
	if a.Scope != nil && (len(a.Scope.Paths) > 0 || len(a.Scope.Symbols) > 0) {
		b.Scope = a.Scope
	}
	if !ok || len(msgs) == 0 {
		b.ContextMode = ContextTaskOnly
		b.ForkedMessageCount = 0
		b.Note = "No parent conversation was available to fork; work from the task, context and scope alone."
		msgs = nil
	}

	answered := map[string]bool{}
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleAssistant {
			last = i
			break
		}
	}
	var pending []agent.ToolCall
	if last >= 0 {
		for _, m := range msgs[last+1:] {
			if m.Role == agent.RoleTool {
				answered[m.ToolCallID] = true
			}
		}
		for _, c := range msgs[last].ToolCalls {
			if !answered[c.ID] {
				pending = append(pending, c)
			}
		}
	}
	delegateID := ""
	for _, c := range pending {
		if callID != "" && c.ID == callID {
			delegateID = c.ID
			break
		}
	}
	if delegateID == "" {
		for _, c := range pending {
			if c.Name == toolName {
				delegateID = c.ID
				break
			}
		}
	}
	bootstrap := string(mustJSON(b))
	if delegateID == "" {
		// No call to answer (no fork, or a caller outside a loop): add an
		// internal matching call so the bootstrap is a valid tool result.
		for _, c := range pending {
			msgs = append(msgs, toolMessage(c, notRunInFork))
		}
		pending = nil
		if len(msgs) == 0 {
			msgs = append(msgs, agent.Message{Role: agent.RoleUser, Content: "A task has been delegated to you; the bootstrap result below says who you are."})
		}
		delegateID = callID
		if delegateID == "" {
			delegateID = "call_bootstrap_" + id.AgentID
		}
		args, _ := json.Marshal(a)
		msgs = append(msgs, agent.Message{Role: agent.RoleAssistant,
			ToolCalls: []agent.ToolCall{{ID: delegateID, Name: toolName, Arguments: string(args)}}})
		pending = msgs[len(msgs)-1].ToolCalls
	}
	for _, c := range pending {
		if c.ID == delegateID {
			msgs = append(msgs, toolMessage(c, bootstrap))
		} else {
			msgs = append(msgs, toolMessage(c, notRunInFork))
		}
	}
	msgs = append(msgs, agent.Message{Role: agent.RoleUser, Content: Instructions(id, a)})
	return Fork{Messages: msgs, Bootstrap: b}
}

func toolMessage(c agent.ToolCall, content string) agent.Message {
	return agent.Message{Role: agent.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content}
}

// Instructions are the subagent's task instructions, sent as the user
// message after the bootstrap result.
func Instructions(id tools.Identity, a Args) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "You are subagent %s, a read-only fork of the main agent. The conversation above is the parent's, copied at the moment it delegated; the subagent_bootstrap result is your identity. Do not answer or continue the parent's conversation: do only the task below and return the result to the parent.\n\n", id.AgentID)
	sb.WriteString("## Task\n")
	sb.WriteString(strings.TrimSpace(a.Task))
	sb.WriteString("\n\n## Why it was delegated\n")
	if c := strings.TrimSpace(a.Context); c != "" {
		sb.WriteString(c)
		sb.WriteString("\n")
	} else {
		sb.WriteString("The parent chose to hand off this bounded investigation so it can keep its own context focused; no further context was given.\n")
	}
	sb.WriteString("\n## Scope\n")
	hasScope := false
	if a.Scope != nil {
		if len(a.Scope.Paths) > 0 {
			hasScope = true
			sb.WriteString("Workspace-relative paths: " + strings.Join(a.Scope.Paths, ", ") + "\n")
		}
		if len(a.Scope.Symbols) > 0 {
			hasScope = true
			sb.WriteString("Symbols: " + strings.Join(a.Scope.Symbols, ", ") + "\n")
		}
	}
	if hasScope {
		sb.WriteString("Start there; look elsewhere only as far as the task needs.\n")
	} else {
		sb.WriteString("No paths or symbols were given; find the relevant ones yourself, narrowly.\n")
	}
	sb.WriteString(`
## Rules
- Strictly read-only: use only read-only tools (list_files, find_files, read_file, ripgrep, and web tools if they work), and bash_exec for commands that inspect (go test, git log, grep): it runs in a read-only sandbox (nothing writable but a temp dir, no network) where this machine enforces one, and is refused where not. Every other tool that changes files, runs commands, asks the user or updates the plan returns permission_denied; do not retry it.
- Inspect, do not implement: never claim a change was made; describe what you observed and what should change.
- Do not call delegate: a subagent cannot delegate; the call fails with nested_delegation_forbidden.
- Cite evidence: workspace-relative file and line for every finding; say how sure you are.
- Be brief and finish: when you have enough, stop calling tools and answer.

## Final answer
Your final message (without tool calls) must be exactly one JSON object, no prose around it:
{"status":"completed|partial|failed","summary":"one paragraph","findings":[{"file":"path/to/file","line":42,"claim":"what you observed","confidence":"high|medium|low"}],"recommended_next_steps":["..."],"tests_to_run":["..."],"uncertainties":["..."]}
Use "partial" if you could not finish, "failed" if you found nothing useful. The runner adds your identity; the parent will verify your claims.
`)
	return sb.String()
}
