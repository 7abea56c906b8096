package agent

import (
	"context"

	"github.com/fido-nvim/fido/agent/conversation"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/workspace"
)

// PlanStore is what the session needs of the durable plan.
type PlanStore interface {
	// Current is the saved plan, nil when there is none.
	Current() *plan.Plan
	// Clear empties the plan (memory and disk) and returns the cleared state
	// the model must see next.
	Clear() (plan.Plan, error)
}

// PermissionRules is what /permissions edits (permission.Store).
type PermissionRules interface {
	All() []permission.Rule
	Keep(keep []permission.Rule) (removed int, err error)
}

// SessionConfig wires a session: the front end (a Screen and a Prompter,
// an EditorSurface when it is an editor), the services the core uses, and
// the settings a session starts with.
type SessionConfig struct {
	Provider Provider
	Registry *tools.Registry
	// Screen shows the conversation; Prompter asks the user (pickers,
	// approvals); Editor is nil for a headless front end.
	Screen   Screen
	Prompter tools.Prompter
	Editor   EditorSurface
	Model    string
	// Reasoning is the initial effort ("" = model default).
	Reasoning string
	// Edits is the initial edit mode: EditsAuto ("" too) or EditsReview.
	Edits string
	Root  string
	// SystemPrompt builds messages[0]; called once per session and again only
	// for /recall (which starts a new session's worth of context).
	SystemPrompt func() string
	// Workspace is where :FidoReview reads and reverts Fido's changes; nil
	// disables it.
	Workspace *workspace.Workspace
	// ConversationID and SeenFiles resume a saved conversation: the id its
	// undo-log entries carry and what it saw of each file (Session.SeenFiles
	// when it was saved). Empty: a new conversation.
	ConversationID string
	SeenFiles      map[string]string
	// Plans may be nil (no plan feature).
	Plans PlanStore
	// SuspendDir holds /suspend snapshots; empty disables /suspend and /recall.
	SuspendDir string
	// Undo lists the newest n mutation-log entries for /undo; nil disables it.
	Undo func(n int) []string
	// UndoRevert reverts the newest mutation (/undo revert) and describes it.
	UndoRevert func(ctx context.Context) (string, error)
	// UserCommands finds the Markdown-defined slash commands (looked up
	// again at every use, so new files need no restart) and the problems
	// met; nil: none. It is called while Neovim waits (completion), so it
	// must answer at once (a CommandIndex's List).
	UserCommands func() ([]UserCommand, []string)
	// UserCommand, when set, finds the command a submitted /name runs
	// (CommandIndex.Find); else UserCommands is searched.
	UserCommand func(name string) (UserCommand, bool)
	// MissingKey, when set, is the one-line error shown instead of starting a
	// turn (e.g. how to set OPENROUTER_API_KEY).
	MissingKey string
	// NestedInstructions reads a subdirectory's AGENTS.md (workspace-
	// relative) for the first tool result that reaches into it; nil: none.
	NestedInstructions FileReader
	// Models reads the endpoint's model list for /model; PreferredModels
	// (setup({ models })) come first in its picker. FixedBudget: the user set
	// the context budget, so switching models keeps it.
	Models          ModelLister
	PreferredModels []string
	FixedBudget     bool
	// Permissions are the command rules /permissions shows and edits.
	Permissions PermissionRules
	// Conversations saves the conversation after every message; nil: kept
	// in memory only.
	Conversations *conversation.Store
	// Resume continues the workspace's newest saved conversation at start
	// (setup({ resume = "last" })).
	Resume bool
	// MaxIterations bounds model calls per turn (default 20).
	MaxIterations int
	// Catalog, when set, adds per-conversation tools (MCP) after Registry's.
	Catalog ToolCatalog
	// Commands, when set, adds slash commands (/mcp …).
	Commands CommandSet
	// ContextBudget is the estimated token size above which older parts of
	// the conversation are shrunk before a turn (0: DefaultContextBudget,
	// negative: never).
	ContextBudget int
}

// Session owns one conversation at a time and coordinates the concerns
// that make it up, each a type with its own state and lock (doc.go has the
// map): the turn slot, the history and its log, edit trust, modes and
// models, usage, the conversation's tools and the command table. Turns run
// in their own goroutine, so every public method returns at once.
type Session struct {
	cfg    SessionConfig
	screen Screen
	prompt tools.Prompter
	editor EditorSurface // nil: headless

	slot  *turnSlot
	hist  *history
	log   *convLog
	trust *editTrust
	modes *settings
	usage *meter
	tools *convTools
	// files is what this conversation saw of each file (read-before-write
	// guard); it is saved with snapshots and restored by /recall.
	files *tools.FileTracker
	cmds  *commandTable
}

// info is what the statusline shows now.
func (s *Session) info() SessionInfo {
	model, reasoning, mode := s.modes.snapshot()
	return SessionInfo{Model: model, Reasoning: reasoning, Root: s.cfg.Root, Edits: s.trust.mode(), Mode: mode,
		ContextUsed: s.hist.tokens() + s.tools.tokens(), ContextLimit: s.modes.contextBudget()}
}

// messageBudget is the budget left for the messages once the tool catalog
// is counted.
func (s *Session) messageBudget() int {
	b := s.modes.contextBudget()
	if b <= 0 {
		return b
	}
	return max(1, b-s.tools.tokens())
}

// restoreDraft puts text back into the editor's input (a headless front
// end keeps its own prompt).
func (s *Session) restoreDraft(text string) {
	if s.editor != nil {
		s.editor.RestoreDraft(text)
	}
}

// ClearPlan clears the plan in memory, on disk and in the window; the next
// model request carries the cleared state as a synthetic update_plan result,
// so the model's source of truth is never stale. It spends no model turn.
func (s *Session) ClearPlan() {
	if s.cfg.Plans == nil {
		s.screen.Notice("plans are not available in this session")
		return
	}
	had := s.cfg.Plans.Current() != nil
	cleared, err := s.cfg.Plans.Clear()
	if err != nil {
		s.screen.Error("could not clear the plan: " + err.Error())
		return
	}
	s.screen.Plan(nil)
	if !had {
		s.screen.Notice("plan cleared (there was none)")
		return
	}
	s.addSynthetic(PlanClearedMessages(cleared)...)
	s.screen.Notice("plan cleared")
}

// addSynthetic adds messages Fido writes (a plan sync, a revert note) to
// the conversation, after the running turn when there is one.
func (s *Session) addSynthetic(msgs ...Message) {
	s.slot.either(func() { s.hist.add(msgs...) }, func() { s.hist.hold(msgs...) })
}

// currentPlanSync is the workspace's plan as a synthetic exchange (none
// without a plan).
func (s *Session) currentPlanSync() []Message {
	if s.cfg.Plans == nil {
		return nil
	}
	p := s.cfg.Plans.Current()
	if p == nil {
		return nil
	}
	return PlanRestoreMessages(*p)
}
