package nvim

import (
	"context"
	"errors"
	"sync"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/ask"
)

// Batch is what one flush sends to require("fido.bridge").apply: each
// surface's part when it changed.
type Batch struct {
	Transcript *TranscriptOps   `msgpack:"transcript,omitempty"`
	Status     *Status          `msgpack:"status,omitempty"`
	Plan       *PlanPayload     `msgpack:"plan,omitempty"`
	Activity   *ActivityPayload `msgpack:"activity,omitempty"`
	Draft      *string          `msgpack:"draft,omitempty"`
	// PlanState carries the normalized plan for status().plan, only when it
	// changed (the plan is not resent with every streamed delta).
	PlanState *PlanState `msgpack:"plan_state,omitempty"`
	// Events are the User autocmds to fire, in the order they happened,
	// once the rest of the batch is applied. A batch carries them (and the
	// status, plan, bar and input requests) only when it carries the whole
	// transcript, so an event never comes before the text that preceded it.
	Events []Event `msgpack:"events,omitempty"`
	// Flushes counts the batches sent so far, this one included.
	Flushes int64 `msgpack:"flushes"`
	// Quit closes Fido's windows (/quit).
	Quit bool `msgpack:"quit,omitempty"`
}

// User autocmds the host fires (see :help fido-events). FidoApprovalNeeded
// is fired by fido.questions as it receives the question, once per question.
const (
	EventTurnDone    = "FidoTurnDone"
	EventPlanUpdated = "FidoPlanUpdated"
)

// Event is one User autocmd: each occurrence is recorded once by the host,
// whatever the coalescing of the surfaces' state.
type Event struct {
	Name string `msgpack:"name"`
	Data any    `msgpack:"data"`
}

// TurnDoneData is FidoTurnDone's data: the totals when the turn ended.
type TurnDoneData struct {
	Model         string      `msgpack:"model"`
	Usage         UsageStatus `msgpack:"usage"`
	SubagentUsage UsageStatus `msgpack:"subagent_usage"`
}

// DefaultLimit bounds each batch's transcript part: a burst read while a
// flush was pending reaches Neovim over several flushes instead of one that
// holds it for more than a frame. Chosen with cmd/renderbench -only sizes
// (Lua's apply time by batch size, on 0.7.2, 0.10.4 and 0.12.4): 1,000
// lines cost 0.3–0.4 ms as answer text, 1.3–2 ms highlighted (reasoning,
// an extmark each), 64 KB of 80-byte lines 0.5–1.2 ms; rows are at most
// MaxRowBytes. So a batch at the bound stays near 2 ms on the slowest
// version, an eighth of a frame, leaving room for the redraw after it and
// for a loaded machine; and at 33 batches a second the bound still drains
// 2 MB/s, more than any model streams. See doc/fido.txt fido-batch-bound.
var DefaultLimit = Limit{Bytes: 64 << 10, Lines: 1000}

// PlanState wraps the plan so that "no plan" (nil) is sent explicitly.
type PlanState struct {
	Plan *plan.Plan `msgpack:"plan"`
}

// inputRequests are one-shot requests for the input window and the layout.
type inputRequests struct {
	draft *string // text to put back into the input
	quit  bool    // close Fido's windows
}

func (r *inputRequests) dirty() bool { return r.draft != nil || r.quit }

func (r *inputRequests) take(b *Batch) {
	b.Draft, r.draft = r.draft, nil
	b.Quit, r.quit = r.quit, false
}

// UI is Neovim's front end for the agent core: an agent.Screen, a
// tools.Prompter (and tools.Asker), the expert asker and the
// agent.EditorSurface. Its state is kept per surface (the
// transcript, the status, the plan float, the subagent bar, the input's
// requests), each knowing what changed since the last batch; one mutex
// guards them all. Every change wakes the flusher, which sends at most one
// batch per FlushInterval as one ExecLua call. Safe for use from any
// goroutine.
type UI struct {
	mu         sync.Mutex
	transcript *Transcript
	status     statusSurface
	plan       planSurface
	activity   activitySurface
	input      inputRequests
	events     []Event // not sent yet, oldest first
	limit      Limit   // of each batch's transcript part
	flushes    int64   // batches taken so far

	flusher *flusher
	prompts *prompts
}

// newUI returns a UI whose flusher writes through send.
func newUI(send func(context.Context, *Batch) error, logf func(string, ...any), p *prompts) *UI {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	u := &UI{
		transcript: NewTranscript(MaxEntries),
		status:     newStatusSurface(),
		limit:      DefaultLimit,
		prompts:    p,
	}
	u.flusher = newFlusher(u.take, send, logf)
	if p != nil {
		p.sync = u.flusher.sync
	}
	return u
}

// update runs f under the lock and wakes the flusher. f marks what it
// changed: transcript edits alone send no status.
func (u *UI) update(f func()) {
	u.mu.Lock()
	f()
	u.mu.Unlock()
	u.flusher.wake()
}

// take builds the pending batch (nil when nothing changed) and marks it
// sent; more reports that the transcript did not fit in the batch's limit.
// The other surfaces and the events then wait for the batch that completes
// the transcript: status() never says idle before the turn's text is shown.
func (u *UI) take() (b *Batch, more bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.status.dirty && !u.transcript.Dirty() && !u.plan.dirty() && !u.activity.dirty && !u.input.dirty() &&
		len(u.events) == 0 {
		return nil, false
	}
	u.flushes++
	b = &Batch{Flushes: u.flushes}
	if u.transcript.Dirty() {
		ops, m := u.transcript.FlushWithin(u.limit)
		b.Transcript, more = &ops, m
	}
	if more {
		return b, true
	}
	u.status.take(b, u.flushes)
	u.plan.take(b)
	u.activity.take(b)
	u.input.take(b)
	b.Events, u.events = u.events, nil
	return b, false
}

// resyncTranscript sends the whole transcript with the next flush.
func (u *UI) resyncTranscript() { u.update(func() { u.transcript.Resync() }) }

// startLayout applies what Lua reported at the handshake: the editor size
// and the plan float's options.
func (u *UI) startLayout(dims EditorDims, opts PlanOptions, autoShowPlan bool) {
	u.update(func() { u.plan.configure(dims, opts, autoShowPlan) })
}

// Info implements agent.Screen.
func (u *UI) Info(i agent.SessionInfo) { u.update(func() { u.status.info(i) }) }

// SetState implements agent.Screen. The state going back to idle ends a turn
// (a /compact too): FidoTurnDone is recorded here, where every state change
// arrives, not inferred later from the coalesced snapshots Lua receives.
func (u *UI) SetState(s agent.TurnState) {
	u.update(func() {
		if st := u.status.st; s == agent.StateIdle && st.State != string(agent.StateIdle) {
			u.events = append(u.events, Event{Name: EventTurnDone,
				Data: TurnDoneData{Model: st.Model, Usage: st.Usage, SubagentUsage: st.SubagentUsage}})
		}
		u.status.state(s)
		if s == agent.StateIdle {
			u.transcript.EndTurn()
		}
	})
}

// UserText implements agent.Screen.
func (u *UI) UserText(text string) { u.update(func() { u.transcript.User(text) }) }

// Reasoning implements agent.Screen.
func (u *UI) Reasoning(delta string) { u.update(func() { u.transcript.Reasoning(delta) }) }

// Content implements agent.Screen.
func (u *UI) Content(delta string) { u.update(func() { u.transcript.Content(delta) }) }

// ToolCall implements agent.Screen: the call's one line.
func (u *UI) ToolCall(c agent.ToolCallInfo) {
	u.update(func() { u.transcript.ToolCall(c.ID, c.Name, c.Summary) })
}

// ToolResult implements agent.Screen: it completes the call's line.
func (u *UI) ToolResult(r agent.ToolResultInfo) {
	u.update(func() { u.transcript.ToolResult(r.ID, r.Name, r.Summary, r.IsError) })
}

// Error implements agent.Screen.
func (u *UI) Error(msg string) { u.update(func() { u.transcript.Error(msg) }) }

// Notice implements agent.Screen.
func (u *UI) Notice(msg string) { u.update(func() { u.transcript.Notice(msg) }) }

// Usage implements agent.Screen.
func (u *UI) Usage(total, subagent agent.Usage) {
	u.update(func() { u.status.usage(total, subagent) })
}

// Plan implements agent.Screen; every call is one FidoPlanUpdated.
func (u *UI) Plan(p *plan.Plan) {
	u.update(func() {
		u.plan.set(p)
		u.events = append(u.events, Event{Name: EventPlanUpdated, Data: PlanState{Plan: p}})
	})
}

// ShowPlan implements agent.EditorSurface.
func (u *UI) ShowPlan(focus bool) { u.update(func() { u.plan.show(focus) }) }

// planClosed records that the user closed the plan window.
func (u *UI) planClosed() { u.update(u.plan.closed) }

// togglePlan closes a visible plan window and shows a hidden one.
func (u *UI) togglePlan() { u.update(u.plan.toggle) }

// resized records the editor size (the plan float is laid out from it).
func (u *UI) resized(d EditorDims) { u.update(func() { u.plan.resized(d) }) }

// Subagent implements agent.Screen.
func (u *UI) Subagent(s *agent.SubagentStatus) {
	u.update(func() {
		u.activity.set(s)
		u.status.subagent(s)
	})
}

// Quit implements agent.EditorSurface: it closes Fido's windows (for
// /quit); the conversation stays.
func (u *UI) Quit() { u.update(func() { u.input.quit = true }) }

// RestoreDraft implements agent.EditorSurface.
func (u *UI) RestoreDraft(text string) { u.update(func() { u.input.draft = &text }) }

// Notify implements agent.Screen.
func (u *UI) Notify(msg string, level agent.Level) {
	if u.prompts != nil {
		u.prompts.notify(msg, level)
	}
}

// Sandbox shows how bash_exec runs commands (status().sandbox, the
// statusline).
func (u *UI) Sandbox(state, summary string) {
	u.update(func() { u.status.sandbox(state, summary) })
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

// Select implements tools.Prompter.
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
		u.update(func() { u.transcript.ToolNote(q.CallID, ":FidoShow "+q.CallID) })
	}
	return u.prompts.question(ctx, q)
}

// Input implements tools.Prompter.
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
	st := u.status.st
	st.Plan, st.Flushes = u.plan.plan, u.flushes
	return st
}

var (
	_ agent.Screen            = (*UI)(nil)
	_ agent.EditorSurface     = (*UI)(nil)
	_ agent.PermissionsEditor = (*UI)(nil)
	_ tools.Prompter          = (*UI)(nil)
	_ tools.Asker             = (*UI)(nil)
	_ ask.ExpertAsker         = (*UI)(nil)
)
