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
	Root      string
	// SystemPrompt builds messages[0]; called once per session and again only
	// for /recall (which starts a new session's worth of context).
	SystemPrompt func() string
	// Plans may be nil (no plan feature).
	Plans PlanStore
	// SuspendDir holds /suspend snapshots; empty disables /suspend and /recall.
	SuspendDir string
	// Undo lists the newest n mutation-log entries for /undo; nil disables it.
	Undo func(n int) []string
	// UndoRevert reverts the newest mutation (/undo revert) and describes it.
	UndoRevert func(ctx context.Context) (string, error)
	// MissingKey, when set, is the one-line error shown instead of starting a
	// turn (e.g. how to set OPENROUTER_API_KEY).
	MissingKey string
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
	total     Usage
	sub       Usage
	running   bool
	cancel    context.CancelFunc
	draft     string
	done      chan struct{}
	subShown  bool
	closed    bool
	reg       *tools.Registry // this conversation's tools; nil until its first request
}

// NewSession builds the system prompt once and, when a plan was saved,
// restores it as a synthetic update_plan call and result right after it.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Provider == nil || cfg.UI == nil || cfg.SystemPrompt == nil {
		return nil, errors.New("agent: session needs a provider, a UI and a system prompt")
	}
	s := &Session{cfg: cfg, ui: cfg.UI, reasoning: cfg.Reasoning, state: StateIdle}
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
	return s, nil
}

// SetContextBudget changes the context budget (estimated tokens; negative:
// never shrink), e.g. once the model's real context window is known.
func (s *Session) SetContextBudget(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.ContextBudget = tokens
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

func (s *Session) info() SessionInfo {
	return SessionInfo{Model: s.cfg.Model, Reasoning: s.reasoning, Root: s.cfg.Root}
}

// Messages returns a deep copy of the conversation.
func (s *Session) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return CloneMessages(s.messages)
}

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
		if name, _, _ := strings.Cut(text, " "); name == "/suspend" || name == "/recall" {
			go s.command(text)
		} else {
			s.command(text)
		}
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.running {
		s.mu.Unlock()
		s.ui.Error("Fido is still working on the previous message: wait for it, or cancel it with <C-c> or :FidoCancel")
		s.ui.RestoreDraft(text)
		return
	}
	if s.cfg.MissingKey != "" {
		s.mu.Unlock()
		s.ui.Error(s.cfg.MissingKey)
		s.ui.RestoreDraft(text)
		return
	}
	if fitted, rep, changed := FitBudget(s.messages, s.budget()); changed {
		s.messages = fitted
		defer s.ui.Notice(rep.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.running, s.cancel, s.draft = true, cancel, text
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
	go s.runTurn(ctx, cancel, text, msgs, reasoning, done)
}

func (s *Session) runTurn(ctx context.Context, cancel context.CancelFunc, text string, msgs []Message, reasoning string, done chan struct{}) {
	defer close(done)
	defer cancel() // releases whatever still waits on the turn's context
	s.event(EvTurnStart)
	s.ui.UserText(text)
	obs := &sessionObserver{s: s, ctx: ctx}
	loop := &Loop{
		Provider: s.cfg.Provider, Registry: s.conversationTools(ctx), Model: s.cfg.Model, Reasoning: reasoning,
		MaxIterations: s.cfg.MaxIterations,
		Invocation:    tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}},
		Observer:      obs,
	}
	before := len(msgs) + 1
	conv, err := loop.Run(ctx, append(msgs, Message{Role: RoleUser, Content: text}))
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
	s.running, s.cancel, s.draft = false, nil, ""
	s.mu.Unlock()

	switch {
	case err == nil:
		s.event(EvDone)
	case cancelled:
		// Cancel already restored the draft and went idle.
		s.event(EvCancel)
	default:
		s.ui.Error(DescribeError(err))
		if !progressed {
			s.ui.RestoreDraft(text)
		}
		s.event(EvError)
	}
}

// Cancel aborts the running turn (and any subagent, through its context),
// restores the unsent draft and returns to idle at once.
func (s *Session) Cancel() {
	s.mu.Lock()
	cancel, draft, running := s.cancel, s.draft, s.running
	s.mu.Unlock()
	if !running {
		return
	}
	cancel()
	s.ui.Notice("cancelled")
	if draft != "" {
		s.ui.RestoreDraft(draft)
	}
	s.event(EvCancel)
}

// Close cancels any turn; later submissions are ignored.
func (s *Session) Close() {
	s.mu.Lock()
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
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

func (s *Session) event(ev TurnEvent) {
	s.mu.Lock()
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
}

func (o *sessionObserver) ModelCall(iteration int) {
	if iteration > 1 {
		o.s.event(EvRequest)
	}
}

func (o *sessionObserver) Delta(d Delta) {
	if o.ctx.Err() != nil {
		return // late deltas after a cancel never reach the transcript
	}
	switch d.Kind {
	case DeltaReasoning:
		o.s.ui.Reasoning(d.Text)
		o.s.event(EvReasoning)
	case DeltaContent:
		o.s.ui.Content(d.Text)
		o.s.event(EvContent)
	case DeltaToolCall:
		o.s.event(EvToolCall)
	case DeltaStatus:
		o.s.ui.Notice(d.Text)
	}
}

func (o *sessionObserver) ToolCall(call ToolCall, summary string) {
	o.s.event(EvToolCall)
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
