package nvim

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// FlushInterval is the least time between two flushes into Neovim.
const FlushInterval = 30 * time.Millisecond

// Batch is what one flush sends to require("fido.bridge").apply.
type Batch struct {
	Transcript *TranscriptOps   `msgpack:"transcript,omitempty"`
	Status     *Status          `msgpack:"status,omitempty"`
	Plan       any              `msgpack:"plan,omitempty"`
	Activity   *ActivityPayload `msgpack:"activity,omitempty"`
	Draft      *string          `msgpack:"draft,omitempty"`
	// PlanState carries the normalized plan for status().plan, only when it
	// changed (the plan is not resent with every streamed delta).
	PlanState *PlanState `msgpack:"plan_state,omitempty"`
	// Flushes counts the batches sent so far, this one included.
	Flushes int64 `msgpack:"flushes"`
	// Quit closes Fido's windows (/quit).
	Quit bool `msgpack:"quit,omitempty"`
}

// PlanState wraps the plan so that "no plan" (nil) is sent explicitly.
type PlanState struct {
	Plan *plan.Plan `msgpack:"plan"`
}

// UsageStatus is a usage total as Lua sees it.
type UsageStatus struct {
	Calls      int     `msgpack:"calls"`
	Input      int64   `msgpack:"input"`
	Output     int64   `msgpack:"output"`
	CacheRead  int64   `msgpack:"cache_read"`
	CacheWrite int64   `msgpack:"cache_write"`
	Cost       float64 `msgpack:"cost"`
}

// SubagentStatusView is the status table's subagent entry.
type SubagentStatusView struct {
	AgentID   string `msgpack:"agent_id"`
	Phase     string `msgpack:"phase"`
	Detail    string `msgpack:"detail"`
	ElapsedMS int64  `msgpack:"elapsed_ms"`
}

// Status is the snapshot behind require("fido").status().
type Status struct {
	State         string              `msgpack:"state"`
	Model         string              `msgpack:"model"`
	Reasoning     string              `msgpack:"reasoning"`
	Root          string              `msgpack:"root"`
	Edits         string              `msgpack:"edits"`
	Context       ContextStatus       `msgpack:"context"`
	Mode          string              `msgpack:"mode"`
	Usage         UsageStatus         `msgpack:"usage"`
	SubagentUsage UsageStatus         `msgpack:"subagent_usage"`
	Plan          *plan.Plan          `msgpack:"plan,omitempty"`
	Subagent      *SubagentStatusView `msgpack:"subagent,omitempty"`
	// Flushes counts the batches the host sent so far (this one included).
	Flushes int64 `msgpack:"flushes"`
}

// ContextStatus is status().context: the estimated size of the next request
// and the budget it is kept under, in tokens.
type ContextStatus struct {
	Used  int `msgpack:"used"`
	Limit int `msgpack:"limit"`
}

func usageStatus(u agent.Usage) UsageStatus {
	return UsageStatus{Calls: u.Calls, Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Cost: u.Cost}
}

// UI implements agent.UI for Neovim. Every method records state and schedules
// a flush; one flusher goroutine sends at most one batch per FlushInterval,
// as one ExecLua call. Safe for use from any goroutine.
type UI struct {
	mu     sync.Mutex
	tr     *Transcript
	status Status
	dirty  bool // status changed since the last flush

	flushes int64

	planHidden  bool // the user closed the window: no auto-show until ShowPlan
	planShown   bool // ShowPlan made it visible even without items
	planFocus   bool // the next plan payload focuses the window
	planDirty   bool // the plan window needs a new payload
	planState   bool // status().plan changed
	dims        EditorDims
	sub         *agent.SubagentStatus
	subDirty    bool
	draft       *string
	quit        bool
	planOptions PlanOptions

	kick  chan struct{}
	send  func(ctx context.Context, b *Batch) error
	naive bool
	sendM sync.Mutex // naive mode: serializes the per-delta writes
	logf  func(string, ...any)

	prompts *prompts
}

// newUI returns a UI that writes through send. naive writes every change at
// once from the calling goroutine (the bench's baseline), never coalescing.
func newUI(send func(context.Context, *Batch) error, naive bool, logf func(string, ...any), p *prompts) *UI {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &UI{
		tr:      NewTranscript(MaxEntries),
		status:  Status{State: string(agent.StateIdle)},
		dirty:   true,
		kick:    make(chan struct{}, 1),
		send:    send,
		naive:   naive,
		logf:    logf,
		prompts: p,
	}
}

// update runs f under the lock and schedules a flush. f sets the dirty flags
// of what it changed: transcript edits alone send no status.
func (u *UI) update(f func()) {
	u.mu.Lock()
	f()
	u.mu.Unlock()
	if u.naive {
		u.sendM.Lock()
		defer u.sendM.Unlock()
		if b := u.take(); b != nil {
			if err := u.send(context.Background(), b); err != nil {
				u.logf("fido: render: %v", err)
			}
		}
		return
	}
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// take builds the pending batch (nil when nothing changed) and marks it sent.
func (u *UI) take() *Batch {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.dirty && !u.tr.Dirty() && !u.planDirty && !u.planState && !u.subDirty && u.draft == nil && !u.quit {
		return nil
	}
	b := &Batch{}
	if u.tr.Dirty() {
		ops := u.tr.Flush()
		b.Transcript = &ops
	}
	u.flushes++
	u.status.Flushes = u.flushes
	b.Flushes = u.flushes
	if u.dirty {
		st := u.status
		st.Plan = nil // sent as PlanState, only when it changed
		b.Status = &st
	}
	if u.planState {
		b.PlanState = &PlanState{Plan: u.status.Plan}
		u.planState = false
	}
	// The plan float's payload (require("fido.planwin").apply), whenever the
	// plan, its visibility, the focus request or the editor size changed.
	if u.planDirty {
		b.Plan = PlanView(u.status.Plan, u.dims, u.planVisible(), u.planFocus, u.planOptions)
		u.planFocus = false
	}
	u.planDirty = false
	if u.subDirty {
		a := ActivityView(u.sub)
		b.Activity = &a
		u.subDirty = false
	}
	b.Draft, u.draft = u.draft, nil
	b.Quit, u.quit = u.quit, false
	u.dirty = false
	return b
}

// planIsVisible reports whether the plan window is (to be) shown.
func (u *UI) planIsVisible() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.planVisible()
}

func (u *UI) planVisible() bool {
	if u.planShown {
		return true
	}
	return !u.planHidden && u.status.Plan != nil && len(u.status.Plan.Items) > 0
}

// run is the flusher: it sends a batch when kicked, then waits out the
// interval, so deltas arriving meanwhile coalesce into the next batch.
func (u *UI) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.kick:
		}
		start := time.Now()
		if b := u.take(); b != nil {
			if err := u.send(ctx, b); err != nil && !errors.Is(err, context.Canceled) {
				u.logf("fido: render: %v", err)
			}
		}
		if wait := FlushInterval - time.Since(start); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// Info implements agent.UI.
func (u *UI) Info(i agent.SessionInfo) {
	u.update(func() {
		u.status.Model, u.status.Reasoning, u.status.Root = i.Model, i.Reasoning, i.Root
		u.status.Edits = i.Edits
		u.status.Context = ContextStatus{Used: i.ContextUsed, Limit: i.ContextLimit}
		u.status.Mode = i.Mode
		u.dirty = true
	})
}

// SetState implements agent.UI.
func (u *UI) SetState(s agent.TurnState) {
	u.update(func() {
		u.status.State = string(s)
		u.dirty = true
		if s == agent.StateIdle {
			u.tr.EndTurn()
		}
	})
}

// UserText implements agent.UI.
func (u *UI) UserText(text string) { u.update(func() { u.tr.User(text) }) }

// Reasoning implements agent.UI.
func (u *UI) Reasoning(delta string) { u.update(func() { u.tr.Reasoning(delta) }) }

// Content implements agent.UI.
func (u *UI) Content(delta string) { u.update(func() { u.tr.Content(delta) }) }

// ToolCall implements agent.UI.
func (u *UI) ToolCall(id, name, summary string) {
	u.update(func() { u.tr.ToolCall(id, name, summary) })
}

// ToolResult implements agent.UI.
func (u *UI) ToolResult(id, name, summary string, isError bool) {
	u.update(func() { u.tr.ToolResult(id, name, summary, isError) })
}

// Error implements agent.UI.
func (u *UI) Error(msg string) { u.update(func() { u.tr.Error(msg) }) }

// Notice implements agent.UI.
func (u *UI) Notice(msg string) { u.update(func() { u.tr.Notice(msg) }) }

// Usage implements agent.UI.
func (u *UI) Usage(total, subagent agent.Usage) {
	u.update(func() {
		u.status.Usage, u.status.SubagentUsage = usageStatus(total), usageStatus(subagent)
		u.dirty = true
	})
}

// Plan implements agent.UI.
func (u *UI) Plan(p *plan.Plan) {
	u.update(func() {
		u.status.Plan = p
		u.planDirty, u.planState = true, true
	})
}

// ShowPlan implements agent.UI.
func (u *UI) ShowPlan(focus bool) {
	u.update(func() {
		u.planHidden, u.planShown, u.planDirty = false, true, true
		u.planFocus = u.planFocus || focus
	})
}

// planClosed records that the user closed the plan window.
func (u *UI) planClosed() {
	u.update(func() { u.planHidden, u.planShown, u.planFocus, u.planDirty = true, false, false, true })
}

// resized records the editor size (the plan float is laid out from it).
func (u *UI) resized(d EditorDims) {
	u.update(func() {
		if d != u.dims {
			u.dims = d
			u.planDirty = true
		}
	})
}

// Subagent implements agent.UI.
func (u *UI) Subagent(s *agent.SubagentStatus) {
	u.update(func() {
		if s != nil {
			c := *s
			s = &c
		}
		u.sub, u.subDirty = s, true
		u.status.Subagent = nil
		if s != nil {
			u.status.Subagent = &SubagentStatusView{AgentID: s.AgentID, Phase: s.Phase, Detail: s.Detail,
				ElapsedMS: s.Elapsed.Milliseconds()}
		}
		u.dirty = true
	})
}

// RestoreDraft implements agent.UI.
// Quit closes Fido's windows (for /quit); the conversation stays.
func (u *UI) Quit() { u.update(func() { u.quit = true }) }

func (u *UI) RestoreDraft(text string) { u.update(func() { u.draft = &text }) }

// Notify implements agent.UI.
func (u *UI) Notify(msg string, level agent.Level) {
	if u.prompts != nil {
		u.prompts.notify(msg, level)
	}
}

// MCPState pushes the MCP servers' state lines and the names of failed
// servers to Lua (:checkhealth fido, the statusline marker).
func (u *UI) MCPState(lines, failed []string) {
	if u.prompts == nil {
		return
	}
	if lines == nil {
		lines = []string{}
	}
	if failed == nil {
		failed = []string{}
	}
	go func() { _ = u.prompts.exec(`require("fido.mcp").set_state(...)`, lines, failed) }()
}

// Select implements agent.UI.
func (u *UI) Select(ctx context.Context, prompt string, items []string) (int, error) {
	if u.prompts == nil {
		return -1, errors.New("fido: no editor connection")
	}
	return u.prompts.sel(ctx, prompt, items)
}

// Ask implements tools.Asker: the question's detail (a whole command, code)
// is shown in full beside the picker, whose prompt stays one line.
func (u *UI) Ask(ctx context.Context, q tools.Question) (int, error) {
	if u.prompts == nil {
		return -1, errors.New("fido: no editor connection")
	}
	if q.CallID != "" && q.Detail != "" {
		// The transcript's one-line summary says where the whole text is.
		u.update(func() { u.tr.ToolNote(q.CallID, ":FidoShow "+q.CallID) })
	}
	return u.prompts.question(ctx, q)
}

// Input implements agent.UI.
func (u *UI) Input(ctx context.Context, prompt, def string) (string, bool, error) {
	if u.prompts == nil {
		return "", false, errors.New("fido: no editor connection")
	}
	return u.prompts.input(ctx, prompt, def)
}

// AskExpert shows the question in a float (and the " and + registers) and
// waits for the pasted answer; ok is false when the user cancelled.
func (u *UI) AskExpert(ctx context.Context, question string) (string, bool, error) {
	if u.prompts == nil {
		return "", false, errors.New("fido: no editor connection")
	}
	return u.prompts.expert(ctx, question)
}

// Status returns the current status snapshot (what Lua's status() shows once flushed).
func (u *UI) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.status
}

var (
	_ agent.UI    = (*UI)(nil)
	_ tools.Asker = (*UI)(nil)
)
