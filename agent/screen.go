package agent

import (
	"time"

	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// The front end is reached through small interfaces, each defined here
// where the session uses it, so that a front end implements only what it
// has (DESIGN.md): every front end has a Screen and a Prompter
// (tools.Prompter; a tools.Asker among them shows a question's detail in
// full); an editor adds an EditorSurface, which a headless front end
// (`fido acp`, a test) leaves nil. The expert asker is the ask tool's own
// (ask.ExpertAsker): the session never asks an expert.

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

// ToolCallInfo is a tool call about to run (or replayed), with what a front
// end needs to show more than its one line: the arguments the model sent
// and what the tool may do.
type ToolCallInfo struct {
	ID   string
	Name string
	// Summary is the transcript's one concise line ("read_file a.go 12–40").
	Summary string
	// Arguments are the call's arguments as the model sent them (JSON, not
	// checked).
	Arguments string
	// Access is what the tool may do (read-only, mutating, …); an unknown
	// tool reads as tools.ReadOnly (its call is refused anyway).
	Access tools.Access
}

// ToolResultInfo completes a ToolCallInfo.
type ToolResultInfo struct {
	ID      string
	Name    string
	Summary string
	IsError bool
	// Content is the result as the model sees it.
	Content string
}

// Screen shows one conversation: the transcript (the user's text, streamed
// reasoning and answer, a line per tool call, notices and errors), the
// status (turn state, model, usage), the plan and the subagent bar. Every
// front end has one. Implementations must not block: they record and render
// asynchronously (coalesced). Methods may be called from any goroutine.
type Screen interface {
	Info(SessionInfo)
	SetState(TurnState)
	UserText(text string)
	Reasoning(delta string)
	Content(delta string)
	// ToolCall shows "● name summary"; ToolResult completes that line.
	ToolCall(call ToolCallInfo)
	ToolResult(res ToolResultInfo)
	// Error is one clear transcript line in FidoError.
	Error(msg string)
	// Notice is a transcript line for local commands and system events.
	Notice(msg string)
	// Usage shows totals: all (main + subagents) and the subagent part.
	Usage(total, subagent Usage)
	// Plan shows the normalized plan (nil when there is none). The window
	// appears by itself when a plan exists, unless the user hid it.
	Plan(p *plan.Plan)
	// Subagent shows the subagent bar (nil hides it).
	Subagent(s *SubagentStatus)
	// Notify is a message outside the transcript (vim.notify).
	Notify(msg string, level Level)
}

// EditorSurface is what only an editor front end has: windows to show and
// an input to give text back to. A headless front end leaves it nil, and
// the session then does without: /plan and /quit only say or cancel, a
// cancelled message is not put back (the client kept its prompt), an edit
// under review is asked about with its whole diff as the question's detail,
// and :FidoReview is not offered.
type EditorSurface interface {
	// ShowPlan makes the plan window visible (empty state included), even if
	// the user hid it; focus moves the cursor into it (:FidoPlan).
	ShowPlan(focus bool)
	// Quit closes Fido's windows (/quit); the conversation stays.
	Quit()
	// RestoreDraft puts unsent text back into the input.
	RestoreDraft(text string)
	// ShowEdit shows a proposed file change (a unified diff) while the user
	// decides about it; an empty diff closes it.
	ShowEdit(title, diff string)
	// OpenReview opens the review tab (:FidoReview), or updates the open
	// one when v.Refresh.
	OpenReview(v ReviewView)
}

// PermissionsEditor is an EditorSurface that can show the command rules
// in an editable buffer (/permissions); writing the buffer calls
// Session.SavePermissions.
type PermissionsEditor interface {
	EditPermissions(lines []string)
}

// ReviewView is what the review tab shows.
type ReviewView struct {
	Title string
	Files []ReviewFile
	Items []ReviewItem
	Notes []string
	// Refresh updates the open review tab instead of opening one.
	Refresh bool
}

// ReviewFile is a reviewed file and its before-state (lines without ends).
type ReviewFile struct {
	Path         string
	Abs          string
	Before       []string
	BeforeExists bool
	Exists       bool
}

// ReviewItem is one hunk: a quickfix entry.
type ReviewItem struct {
	Path string
	Abs  string
	Line int
	Text string
	// Edited marks a hunk someone else changed since Fido wrote it.
	Edited bool
}
