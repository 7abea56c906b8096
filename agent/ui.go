package agent

import (
	"context"
	"time"

	"github.com/fido-nvim/fido/plan"
)

// TurnState is the connection state shown next to the spinner.
type TurnState string

const (
	StateIdle       TurnState = "idle"
	StateConnecting TurnState = "connecting"
	StateThinking   TurnState = "thinking"
	StateWorking    TurnState = "working"
	StateStreaming  TurnState = "streaming"
)

// SubagentStatus is the sanitized state of a running (or just finished)
// subagent: lifecycle metadata only, never message text or reasoning.
type SubagentStatus struct {
	AgentID string
	// Phase: starting, reasoning, <tool name>, reviewing, completed, partial,
	// failed, cancelled, or "nested delegation rejected".
	Phase   string
	Detail  string
	Elapsed time.Duration
	// Done is set once the subagent reached a final phase.
	Done bool
}

// SessionInfo is what the statusline shows besides state and usage.
type SessionInfo struct {
	Model     string
	Reasoning string
	Root      string
	// Edits is the edit mode: EditsAuto or EditsReview.
	Edits string
	// Mode is the approval mode: default, plan or auto-edit.
	Mode string
	// ContextUsed is the estimated size of the next request (messages and
	// tool catalog) in tokens; ContextLimit the budget it is kept under.
	ContextUsed, ContextLimit int
}

// Level of a user notification.
type Level int

const (
	LevelInfo Level = iota
	LevelWarn
	LevelError
)

// UI is everything the core needs from the editor. Implementations must not
// block: they record and render asynchronously (coalesced). Methods may be
// called from any goroutine.
type UI interface {
	Info(SessionInfo)
	SetState(TurnState)
	UserText(text string)
	Reasoning(delta string)
	Content(delta string)
	// ToolCall shows "● name summary"; ToolResult completes that line.
	ToolCall(id, name, summary string)
	ToolResult(id, name, summary string, isError bool)
	// Error is one clear transcript line in FidoError.
	Error(msg string)
	// Notice is a transcript line for local commands and system events.
	Notice(msg string)
	// Usage shows totals: all (main + subagents) and the subagent part.
	Usage(total, subagent Usage)
	// Plan shows the normalized plan (nil when there is none). The window
	// appears by itself when a plan exists, unless the user hid it.
	Plan(p *plan.Plan)
	// ShowPlan makes the plan window visible (empty state included), even if
	// the user hid it; focus moves the cursor into it (:FidoPlan).
	ShowPlan(focus bool)
	// Subagent shows the subagent bar (nil hides it).
	Subagent(s *SubagentStatus)
	// Quit closes Fido's windows (/quit); the conversation stays.
	Quit()
	// RestoreDraft puts unsent text back into the input.
	RestoreDraft(text string)
	// Notify is a vim.notify message.
	Notify(msg string, level Level)
	// Select asks the user to pick one item; it blocks the calling goroutine
	// (never the RPC loop) and returns -1 when dismissed.
	Select(ctx context.Context, prompt string, items []string) (int, error)
	// Input asks the user for a line of text; ok is false when dismissed.
	Input(ctx context.Context, prompt, def string) (text string, ok bool, err error)
	// ShowEdit shows a proposed file change (a unified diff) while the user
	// decides about it; an empty diff closes it.
	ShowEdit(title, diff string)
	// OpenReview opens the review tab (:FidoReview), or updates the open
	// one when v.Refresh.
	OpenReview(v ReviewView)
	// AskExpert shows a question to copy to a human expert and waits for the
	// pasted answer; ok is false when the user cancelled.
	AskExpert(ctx context.Context, question string) (answer string, ok bool, err error)
}
