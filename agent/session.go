package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
	textfmt "github.com/fido-nvim/fido/tools/text" // "text" names messages here
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

// SessionConfig wires a session.
type SessionConfig struct {
	Provider Provider
	Registry *tools.Registry
	UI       UI
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
	Conversations *ConversationStore
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

// Session owns one conversation: its messages, the running turn, usage
// totals. All mutable state is guarded by mu; turns run in their own
// goroutine, so every public method returns at once.
type Session struct {
	cfg SessionConfig
	ui  UI

	mu        sync.Mutex
	messages  []Message
	pending   []Message // synthetic messages queued while a turn runs
	reasoning string
	state     TurnState
	// gen numbers the turns; a turn's events carry it, so the late end of
	// a cancelled turn never moves the state of the turn after it.
	gen int
	// stateMu orders state changes with their SetState calls: the UI sees
	// them in the order the reducer made them. Taken before mu.
	stateMu   sync.Mutex
	total     Usage
	sub       Usage
	running   bool
	cancelled bool // the running turn was cancelled and is unwinding
	cancel    context.CancelFunc
	draft     string
	done      chan struct{}
	subShown  bool
	closed    bool
	reg       *tools.Registry // this conversation's tools; nil until its first request
	// queued are messages submitted while a turn ran; they go out together
	// as the next user message when it ends.
	queued []string

	// logMu guards the conversation log; never taken while holding mu.
	logMu     sync.Mutex
	log       *ConversationLog
	savedLive []Message         // the live conversation as the log has it (no system message)
	savedSeen map[string]string // the seen files as the log has them
	logFailed bool

	// modelList caches the endpoint's model list (/model).
	modelList []ModelInfo
	// nested attaches subdirectories' AGENTS.md once per conversation.
	nested *NestedInstructions
	// mode is the approval mode (/mode). The model hears of it through a
	// note on the next user message (never in the system message) whenever
	// the conversation it sees does not already say so (modeNote).
	mode string

	// files is what this conversation saw of each file (read-before-write
	// guard); it is saved with snapshots and restored by /recall.
	files *tools.FileTracker
	// edits is the edit mode; applyAll is set by "Apply all this turn"
	// until the next turn starts.
	edits    string
	applyAll bool
	gate     *editGate
	// id names the conversation in the undo log; turn counts its user
	// messages (turns).
	id   string
	turn int
	// review is the open :FidoReview; revertNotes are what the user
	// reverted there, told to the model with the next user message.
	review      *reviewState
	revertNotes []string
}

// NewSession builds the system prompt once and, when a plan was saved,
// restores it as a synthetic update_plan call and result right after it.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Provider == nil || cfg.UI == nil || cfg.SystemPrompt == nil {
		return nil, errors.New("agent: session needs a provider, a UI and a system prompt")
	}
	s := &Session{cfg: cfg, ui: cfg.UI, reasoning: cfg.Reasoning, state: StateIdle, files: tools.NewFileTracker(cfg.SeenFiles), edits: EditsAuto}
	if cfg.Edits == EditsReview {
		s.edits = EditsReview
	}
	s.gate = &editGate{s: s}
	s.id = cfg.ConversationID
	if s.id == "" {
		s.id = newConversationID(now())
	}
	s.messages = []Message{{Role: RoleSystem, Content: cfg.SystemPrompt()}}
	if cfg.Plans != nil {
		if p := cfg.Plans.Current(); p != nil {
			s.messages = append(s.messages, PlanRestoreMessages(*p)...)
			s.ui.Plan(p)
		}
	}
	s.ui.Info(s.info())
	s.ui.SetState(StateIdle)
	s.ui.Usage(Usage{}, Usage{})
	if cfg.Conversations != nil && cfg.Resume {
		s.resumeNewest()
	}
	return s, nil
}

// SetContextBudget changes the context budget (estimated tokens; negative:
// never shrink), e.g. once the model's real context window is known.
func (s *Session) SetContextBudget(tokens int) {
	s.mu.Lock()
	s.cfg.ContextBudget = tokens
	info := s.info()
	s.mu.Unlock()
	s.ui.Info(info) // the context gauge follows
}

// budget is called with s.mu held.
func (s *Session) budget() int {
	switch {
	case s.cfg.ContextBudget < 0:
		return 0
	case s.cfg.ContextBudget == 0:
		return DefaultContextBudget
	}
	return s.cfg.ContextBudget
}

// info is called with s.mu held.
func (s *Session) info() SessionInfo {
	return SessionInfo{Model: s.cfg.Model, Reasoning: s.reasoning, Root: s.cfg.Root, Edits: s.edits, Mode: s.modeName(),
		ContextUsed: s.contextTokens(s.messages), ContextLimit: s.budget()}
}

// Messages returns a deep copy of the conversation.
func (s *Session) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return CloneMessages(s.messages)
}

// SeenFiles returns what the conversation saw of each file: the content
// hash as of the model's last read or Fido's last write, by workspace path.
func (s *Session) SeenFiles() map[string]string { return s.files.Snapshot() }

// Totals returns all usage (main + subagents) and the subagent part.
func (s *Session) Totals() (total, subagent Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.sub
}

// Busy reports whether a turn is running.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Wait blocks until the running turn (if any) has finished.
func (s *Session) Wait() {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Submit starts a turn with text, or runs a local /command. It never blocks.
func (s *Session) Submit(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if strings.HasPrefix(text, "/") {
		// Commands that wait for the user run on their own goroutine; the
		// others run in order with the messages around them, so a message
		// sent right after /undo revert or /plan clear sees their effect.
		if name, _, _ := strings.Cut(text, " "); name == "/suspend" || name == "/recall" || name == "/sessions" || name == "/rewind" || name == "/compact" || name == "/model" {
			go s.command(text)
		} else {
			s.command(text)
		}
		return
	}
	s.submitMessage(text)
}

// submitMessage starts a turn with a user message (never a /command).
func (s *Session) submitMessage(text string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.running && s.cancelled {
		// The cancelled turn is unwinding (its tools are being answered
		// "cancelled"): the new message starts right after it, so a cancel
		// never leaves the user facing "still working".
		prev := s.done
		s.mu.Unlock()
		go s.submitAfter(prev, text)
		return
	}
	if s.running {
		s.queued = append(s.queued, text)
		n := len(s.queued)
		s.mu.Unlock()
		s.ui.Notice(fmt.Sprintf("queued (%d): %s — sent when this turn ends; <C-c> cancels and puts it back in the input", n, textfmt.ShortenTo(textfmt.FirstLine(text), 60)))
		return
	}
	if s.cfg.MissingKey != "" {
		s.mu.Unlock()
		s.ui.Error(s.cfg.MissingKey)
		s.ui.RestoreDraft(text)
		return
	}
	// Past the budget, the model summarizes the older turns before this
	// one (runTurn); with too few turns for that, old parts are shrunk.
	compact := s.budget() > 0 && s.contextTokens(s.messages) > s.budget() && len(userTurnStarts(s.messages)) > keepRecentTurns
	if !compact {
		if fitted, rep, changed := FitBudget(s.messages, s.messageBudget()); changed {
			s.messages = fitted
			defer s.ui.Notice(rep.String())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.running, s.cancel, s.draft = true, cancel, text
	s.gen++
	gen := s.gen
	s.applyAll = false
	s.turn++
	user := Message{Role: RoleUser, Content: text, Turn: s.turn, Time: now().UTC().Format(time.RFC3339)}
	notes := s.revertNotes
	if len(notes) > 0 {
		user.Content += revertMarker + strings.Join(notes, "; ") + "]"
		s.revertNotes = nil
	}
	user.Content += modeNote(s.messages, s.modeName())
	inv := tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}, Files: s.files, Gate: s.gate,
		Conversation: s.id, Turn: s.turn, PlanMode: s.mode == ModePlan}
	done := make(chan struct{})
	s.done = done
	msgs := CloneMessages(s.messages)
	reasoning := s.reasoning
	clearBar := s.subShown
	s.subShown = false
	s.mu.Unlock()

	if clearBar {
		s.ui.Subagent(nil)
	}
	go s.runTurn(ctx, cancel, gen, text, user, notes, inv, msgs, reasoning, done, compact)
}

// messageBudget is the budget left for the messages once the tool catalog
// is counted. Called with s.mu held.
func (s *Session) messageBudget() int {
	b := s.budget()
	if b <= 0 {
		return b
	}
	return max(1, b-s.catalogTokens())
}

func (s *Session) runTurn(ctx context.Context, cancel context.CancelFunc, gen int, text string, user Message, notes []string, inv tools.Invocation, msgs []Message, reasoning string, done chan struct{}, compact bool) {
	defer close(done)
	defer cancel() // releases whatever still waits on the turn's context
	startTotal, _ := s.Totals()
	s.event(gen, EvTurnStart)
	if compact {
		msgs = s.compactBeforeTurn(ctx, msgs)
	}
	s.ui.UserText(text)
	obs := &sessionObserver{s: s, ctx: ctx, gen: gen}
	loop := &Loop{
		Provider: s.cfg.Provider, Registry: s.conversationTools(ctx), Model: s.cfg.Model, Reasoning: reasoning,
		MaxIterations: s.cfg.MaxIterations,
		Invocation:    inv,
		Observer:      obs,
	}
	loop.Recorder = convRecorder{s}
	if s.cfg.NestedInstructions != nil {
		nested := s.nestedInstructions()
		loop.AfterTool = func(call ToolCall, res tools.Result) tools.Result {
			return attachNested(nested, call, res)
		}
	}
	s.save(func(l *ConversationLog) error { return l.Append(user) }, user)
	before := len(msgs) + 1
	conv, err := loop.Run(ctx, append(msgs, user))
	progressed := len(conv) > before

	s.mu.Lock()
	cancelled := ctx.Err() != nil
	switch {
	case err == nil:
		s.messages = Compact(conv)
	case progressed:
		// Tools ran: their effects are real, so the model must keep seeing them.
		s.messages = conv
	}
	s.messages = append(s.messages, s.pending...)
	s.pending = nil
	if err != nil && !progressed {
		// The message is not kept: its revert notes go with the next one.
		s.revertNotes = append(notes, s.revertNotes...)
	}
	s.running, s.cancelled, s.cancel, s.draft = false, false, nil, ""
	queued := s.queued
	s.queued = nil
	total := s.total
	s.mu.Unlock()
	s.endTurnRecords(total.Cost)
	s.ui.Info(s.infoNow())
	if len(queued) > 0 {
		if cancelled {
			// Cancel put them back into the input already.
			queued = nil
		} else {
			defer s.submitMessage(strings.Join(queued, "\n\n"))
		}
	}

	switch {
	case err == nil:
		endTotal, _ := s.Totals()
		s.ui.Notice(turnCost(startTotal, endTotal))
		s.event(gen, EvDone)
	case cancelled:
		// Cancel already restored the draft and went idle.
		s.event(gen, EvCancel)
	default:
		s.ui.Error(DescribeError(err))
		if !progressed {
			s.ui.RestoreDraft(text)
		}
		s.event(gen, EvError)
	}
}

// endTurnRecords saves what a turn leaves besides its messages (the live
// history when it differs from the log, what was seen of files, the cost),
// with one fsync. Without a log there is nothing to save.
func (s *Session) endTurnRecords(cost float64) {
	s.logMu.Lock()
	l := s.log
	s.logMu.Unlock()
	if l == nil {
		return
	}
	err := l.Batch(func() error {
		s.syncLive("end of turn")
		s.saveSeen()
		s.logMu.Lock()
		defer s.logMu.Unlock()
		if s.log != nil {
			_ = s.log.SetMeta("", "", cost)
		}
		return nil
	})
	if err != nil {
		s.logMu.Lock()
		defer s.logMu.Unlock()
		s.saveFailedLocked(err)
	}
}

// unwindTimeout bounds how long a message sent right after a cancel waits
// for the cancelled turn to finish unwinding.
var unwindTimeout = 10 * time.Second

// submitAfter submits text once the cancelled turn that owns prev is done.
func (s *Session) submitAfter(prev chan struct{}, text string) {
	t := time.NewTimer(unwindTimeout)
	defer t.Stop()
	select {
	case <-prev:
		s.Submit(text)
	case <-t.C:
		s.ui.Error("the cancelled turn has not stopped yet (a model request ignores the cancel); send the message again in a moment")
		s.ui.RestoreDraft(text)
	}
}

// Cancel aborts the running turn (and any subagent, through its context),
// restores the unsent draft and returns to idle at once. A tool still stuck
// in a system call does not hold the turn: the loop answers its call
// "cancelled" and drops its late result.
func (s *Session) Cancel() {
	s.mu.Lock()
	cancel, draft, running, gen := s.cancel, s.draft, s.running && !s.cancelled, s.gen
	if running {
		s.cancelled = true
	}
	queued := s.queued
	s.queued = nil
	s.mu.Unlock()
	if !running {
		return
	}
	cancel()
	s.ui.Notice("cancelled")
	// The cancelled message, then what was queued behind it, back in the
	// input for editing.
	if back := strings.Join(append([]string{draft}, queued...), "\n\n"); strings.TrimSpace(back) != "" {
		s.ui.RestoreDraft(strings.TrimSpace(back))
	}
	s.event(gen, EvCancel)
}

// Close cancels any turn and releases the saved conversation; later
// submissions are ignored.
func (s *Session) Close() {
	s.mu.Lock()
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.closeLog()
}

// AddSubagentUsage adds a subagent's model usage to the totals and to the
// separate subagent totals.
func (s *Session) AddSubagentUsage(u Usage) {
	s.mu.Lock()
	s.total = s.total.Add(u)
	s.sub = s.sub.Add(u)
	total, sub := s.total, s.sub
	s.mu.Unlock()
	s.ui.Usage(total, sub)
}

// SubagentStatus forwards a subagent bar update; the final state stays shown
// until the next user turn starts.
func (s *Session) SubagentStatus(st *SubagentStatus) {
	s.mu.Lock()
	s.subShown = st != nil
	s.mu.Unlock()
	s.ui.Subagent(st)
}

// Plan handles :FidoPlan [arg].
func (s *Session) Plan(arg string) {
	switch strings.TrimSpace(arg) {
	case "", "show":
		s.ui.ShowPlan(true)
	case "clear":
		s.ClearPlan()
	default:
		s.ui.Notify(fmt.Sprintf("FidoPlan: unknown argument %q (use :FidoPlan, :FidoPlan clear, hide or toggle)", arg), LevelWarn)
	}
}

// ClearPlan clears the plan in memory, on disk and in the window; the next
// model request carries the cleared state as a synthetic update_plan result,
// so the model's source of truth is never stale. It spends no model turn.
func (s *Session) ClearPlan() {
	if s.cfg.Plans == nil {
		s.ui.Notice("plans are not available in this session")
		return
	}
	had := s.cfg.Plans.Current() != nil
	cleared, err := s.cfg.Plans.Clear()
	if err != nil {
		s.ui.Error("could not clear the plan: " + err.Error())
		return
	}
	s.ui.Plan(nil)
	if !had {
		s.ui.Notice("plan cleared (there was none)")
		return
	}
	sync := PlanClearedMessages(cleared)
	s.mu.Lock()
	if s.running {
		s.pending = append(s.pending, sync...)
	} else {
		s.messages = append(s.messages, sync...)
	}
	s.mu.Unlock()
	s.ui.Notice("plan cleared")
}

// setState puts turn gen in state st (a compaction, which has no model
// stream to drive the reducer); nothing happens when another turn began.
func (s *Session) setState(gen int, st TurnState) {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	s.mu.Lock()
	if gen != s.gen {
		s.mu.Unlock()
		return
	}
	s.state = st
	s.mu.Unlock()
	s.ui.SetState(st)
}

// event moves the state of turn gen; an event of an earlier turn (a
// cancelled turn finishing after the next one started) changes nothing.
func (s *Session) event(gen int, ev TurnEvent) {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	s.mu.Lock()
	if gen != s.gen {
		s.mu.Unlock()
		return
	}
	old := s.state
	s.state = Reduce(old, ev)
	now := s.state
	s.mu.Unlock()
	if now != old || ev == EvTurnStart {
		s.ui.SetState(now)
	}
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

// sessionObserver maps loop events to the reducer and the UI.
type sessionObserver struct {
	s   *Session
	ctx context.Context
	gen int
}

func (o *sessionObserver) ModelCall(iteration int) {
	if iteration > 1 {
		o.s.event(o.gen, EvRequest)
	}
}

func (o *sessionObserver) Delta(d Delta) {
	if o.ctx.Err() != nil {
		return // late deltas after a cancel never reach the transcript
	}
	switch d.Kind {
	case DeltaReasoning:
		o.s.ui.Reasoning(d.Text)
		o.s.event(o.gen, EvReasoning)
	case DeltaContent:
		o.s.ui.Content(d.Text)
		o.s.event(o.gen, EvContent)
	case DeltaToolCall:
		o.s.event(o.gen, EvToolCall)
	case DeltaStatus:
		o.s.ui.Notice(d.Text)
	}
}

func (o *sessionObserver) ToolCall(call ToolCall, summary string) {
	o.s.event(o.gen, EvToolCall)
	o.s.ui.ToolCall(call.ID, call.Name, summary)
}

func (o *sessionObserver) ToolResult(call ToolCall, res tools.Result) {
	o.s.ui.ToolResult(call.ID, call.Name, res.Summary, res.IsError)
}

func (o *sessionObserver) Usage(u Usage) {
	s := o.s
	s.mu.Lock()
	s.total = s.total.Add(u)
	total, sub := s.total, s.sub
	s.mu.Unlock()
	s.ui.Usage(total, sub)
}

// now is replaceable in tests.
var now = time.Now

// turnCost is the line the transcript shows at the end of a turn: what it
// cost and how much of its input the provider's cache served.
func turnCost(before, after Usage) string {
	d := Usage{Calls: after.Calls - before.Calls, Input: after.Input - before.Input, Output: after.Output - before.Output,
		CacheRead: after.CacheRead - before.CacheRead, CacheWrite: after.CacheWrite - before.CacheWrite, Cost: after.Cost - before.Cost}
	line := fmt.Sprintf("turn: $%.4f · %d calls · in %s · out %s · cache read %s", d.Cost, d.Calls, kTokens(d.Input), kTokens(d.Output), kTokens(d.CacheRead))
	if d.CacheWrite > 0 {
		line += " · cache written " + kTokens(d.CacheWrite)
	}
	return line
}

func kTokens(n int64) string {
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%d", n)
}
