package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/agent/conversation"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
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

// NewSession builds the system prompt once and, when a plan was saved,
// restores it as a synthetic update_plan call and result right after it.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Provider == nil || cfg.Screen == nil || cfg.Prompter == nil || cfg.SystemPrompt == nil {
		return nil, errors.New("agent: session needs a provider, a screen, a prompter and a system prompt")
	}
	s := &Session{cfg: cfg, screen: cfg.Screen, prompt: cfg.Prompter, editor: cfg.Editor,
		files: tools.NewFileTracker(cfg.SeenFiles), modes: newSettings(cfg)}
	s.slot = newTurnSlot(cfg.Screen)
	s.usage = &meter{screen: cfg.Screen}
	s.tools = &convTools{base: cfg.Registry, catalog: cfg.Catalog, read: cfg.NestedInstructions, screen: cfg.Screen}
	s.trust = newEditTrust(cfg.Edits, cfg.Workspace, s.modes, cfg.Prompter, cfg.Editor)
	msgs := []Message{{Role: RoleSystem, Content: cfg.SystemPrompt()}}
	var restored *plan.Plan
	if cfg.Plans != nil {
		if restored = cfg.Plans.Current(); restored != nil {
			msgs = append(msgs, PlanRestoreMessages(*restored)...)
		}
	}
	s.hist = newHistory(msgs, cfg.ConversationID)
	s.log = &convLog{store: cfg.Conversations, root: cfg.Root, hist: s.hist, modes: s.modes, files: s.files, screen: cfg.Screen}
	s.cmds = newCommandTable(s)
	if restored != nil {
		s.screen.Plan(restored)
	}
	s.screen.Info(s.info())
	s.screen.SetState(StateIdle)
	s.screen.Usage(Usage{}, Usage{})
	if cfg.Conversations != nil && cfg.Resume {
		s.resumeNewest()
	}
	return s, nil
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

// The session as its front end and the delegate tool see it.

// Messages returns a deep copy of the conversation.
func (s *Session) Messages() []Message { return s.hist.snapshot() }

// SeenFiles returns what the conversation saw of each file: the content
// hash as of the model's last read or Fido's last write, by workspace path.
func (s *Session) SeenFiles() map[string]string { return s.files.Snapshot() }

// Totals returns all usage (main + subagents) and the subagent part.
func (s *Session) Totals() (total, subagent Usage) { return s.usage.totals() }

// Busy reports whether a turn is running.
func (s *Session) Busy() bool { return s.slot.busy() }

// Wait blocks until the running turn (if any) has finished.
func (s *Session) Wait() { s.slot.wait() }

// ConversationID is the current conversation's id ("" before it is saved).
func (s *Session) ConversationID() string { return s.log.id() }

// Model is the current model id.
func (s *Session) Model() string { return s.modes.Model() }

// Reasoning returns the current effort ("" = model default).
func (s *Session) Reasoning() string { return s.modes.Reasoning() }

// Mode is the current approval mode.
func (s *Session) Mode() string { return s.modes.Mode() }

// SlashModels lists model ids for completion (from the cached list).
func (s *Session) SlashModels() []string { return s.modes.modelIDs() }

// Registry is the tool registry of the current conversation: the built-in
// tools plus, once the conversation's first request fixed them, the
// catalog's. Subagents advertise and call the same.
func (s *Session) Registry() *tools.Registry { return s.tools.registry() }

// ResetTools drops the conversation's fixed catalog: the next request takes
// a new one (its tool list, and so the cached prompt prefix, may change).
func (s *Session) ResetTools() { s.tools.reset() }

// SubagentHook is the hook a subagent's tool results pass through: the
// nested AGENTS.md the parent gets, starting from what its fork carries.
// nil: none.
func (s *Session) SubagentHook(fork []Message) func(ToolCall, tools.Result) tools.Result {
	if s.cfg.NestedInstructions == nil {
		return nil
	}
	return NestedHook(s.cfg.NestedInstructions, fork)
}

// SetContextBudget changes the context budget (estimated tokens; negative:
// never shrink), e.g. once the model's real context window is known.
func (s *Session) SetContextBudget(tokens int) {
	s.modes.setBudget(tokens)
	s.screen.Info(s.info()) // the context gauge follows
}

// AddSubagentUsage adds a subagent's model usage to the totals and to the
// separate subagent totals.
func (s *Session) AddSubagentUsage(u Usage) { s.usage.addSubagent(u) }

// SubagentStatus forwards a subagent bar update; the final state stays shown
// until the next user turn starts.
func (s *Session) SubagentStatus(st *SubagentStatus) {
	s.slot.showSubagent(st != nil)
	s.screen.Subagent(st)
}

// restoreDraft puts text back into the editor's input (a headless front
// end keeps its own prompt).
func (s *Session) restoreDraft(text string) {
	if s.editor != nil {
		s.editor.RestoreDraft(text)
	}
}

// Submit starts a turn with text, or runs a local /command. It never blocks.
func (s *Session) Submit(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if strings.HasPrefix(text, "/") {
		name, arg := splitCommand(text)
		c, ok := s.cmds.find(name)
		switch {
		case !ok:
			s.screen.Error(fmt.Sprintf("unknown command %s; /help lists the commands", name))
		case c.Async:
			go c.Run(name, arg)
		default:
			c.Run(name, arg)
		}
		return
	}
	s.submitMessage(text)
}

// Cancel aborts the running turn (and any subagent, through its context),
// restores the unsent draft and returns to idle at once. A tool still stuck
// in a system call does not hold the turn: the loop answers its call
// "cancelled" and drops its late result.
func (s *Session) Cancel() {
	draft, queued, gen, ok := s.slot.interrupt()
	if !ok {
		return
	}
	s.screen.Notice("cancelled")
	// The cancelled message, then what was queued behind it, back in the
	// input for editing.
	if back := strings.Join(append([]string{draft}, queued...), "\n\n"); strings.TrimSpace(back) != "" {
		s.restoreDraft(strings.TrimSpace(back))
	}
	s.slot.event(gen, EvCancel)
}

// Close cancels any turn and releases the saved conversation; later
// submissions are ignored.
func (s *Session) Close() {
	s.slot.close()
	total, _ := s.usage.totals()
	s.log.close(total.Cost)
}

// Plan handles :FidoPlan [arg].
func (s *Session) Plan(arg string) {
	switch strings.TrimSpace(arg) {
	case "", "show":
		if s.editor != nil {
			s.editor.ShowPlan(true)
		}
	case "clear":
		s.ClearPlan()
	default:
		s.screen.Notify(fmt.Sprintf("FidoPlan: unknown argument %q (use :FidoPlan, :FidoPlan clear, hide or toggle)", arg), LevelWarn)
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

// DescribeError words a turn failure in one line for the transcript.
func DescribeError(err error) string {
	var pe *ProviderError
	switch {
	case errors.As(err, &pe):
		return pe.Message
	case errors.Is(err, ErrMaxIterations):
		return "stopped: the model kept calling tools for " + strings.TrimPrefix(err.Error(), ErrMaxIterations.Error()+" ") +
			" model calls in one turn; send a message to let it continue"
	case errors.Is(err, context.DeadlineExceeded):
		return "the model request timed out"
	}
	return err.Error()
}
