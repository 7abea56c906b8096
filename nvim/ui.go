package nvim

import (
	"context"
	"errors"
	"sync"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
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
	// Flushes counts the batches sent so far, this one included.
	Flushes int64 `msgpack:"flushes"`
	// Quit closes Fido's windows (/quit).
	Quit bool `msgpack:"quit,omitempty"`
}

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

// UI implements agent.UI for Neovim. Its state is kept per surface (the
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
	flushes    int64 // batches taken so far

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
		prompts:    p,
	}
	u.flusher = newFlusher(u.take, send, logf)
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

// take builds the pending batch (nil when nothing changed) and marks it sent.
func (u *UI) take() *Batch {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.status.dirty && !u.transcript.Dirty() && !u.plan.dirty() && !u.activity.dirty && !u.input.dirty() {
		return nil
	}
	u.flushes++
	b := &Batch{Flushes: u.flushes}
	if u.transcript.Dirty() {
		ops := u.transcript.Flush()
		b.Transcript = &ops
	}
	u.status.take(b, u.flushes)
	u.plan.take(b)
	u.activity.take(b)
	u.input.take(b)
	return b
}

// resyncTranscript sends the whole transcript with the next flush.
func (u *UI) resyncTranscript() { u.update(func() { u.transcript.Resync() }) }

// startLayout applies what Lua reported at the handshake: the editor size
// and the plan float's options.
func (u *UI) startLayout(dims EditorDims, opts PlanOptions, autoShowPlan bool) {
	u.update(func() { u.plan.configure(dims, opts, autoShowPlan) })
}

// Info implements agent.UI.
func (u *UI) Info(i agent.SessionInfo) { u.update(func() { u.status.info(i) }) }

// SetState implements agent.UI.
func (u *UI) SetState(s agent.TurnState) {
	u.update(func() {
		u.status.state(s)
		if s == agent.StateIdle {
			u.transcript.EndTurn()
		}
	})
}

// UserText implements agent.UI.
func (u *UI) UserText(text string) { u.update(func() { u.transcript.User(text) }) }

// Reasoning implements agent.UI.
func (u *UI) Reasoning(delta string) { u.update(func() { u.transcript.Reasoning(delta) }) }

// Content implements agent.UI.
func (u *UI) Content(delta string) { u.update(func() { u.transcript.Content(delta) }) }

// ToolCall implements agent.UI.
func (u *UI) ToolCall(id, name, summary string) {
	u.update(func() { u.transcript.ToolCall(id, name, summary) })
}

// ToolResult implements agent.UI.
func (u *UI) ToolResult(id, name, summary string, isError bool) {
	u.update(func() { u.transcript.ToolResult(id, name, summary, isError) })
}

// Error implements agent.UI.
func (u *UI) Error(msg string) { u.update(func() { u.transcript.Error(msg) }) }

// Notice implements agent.UI.
func (u *UI) Notice(msg string) { u.update(func() { u.transcript.Notice(msg) }) }

// Usage implements agent.UI.
func (u *UI) Usage(total, subagent agent.Usage) {
	u.update(func() { u.status.usage(total, subagent) })
}

// Plan implements agent.UI.
func (u *UI) Plan(p *plan.Plan) { u.update(func() { u.plan.set(p) }) }

// ShowPlan implements agent.UI.
func (u *UI) ShowPlan(focus bool) { u.update(func() { u.plan.show(focus) }) }

// planClosed records that the user closed the plan window.
func (u *UI) planClosed() { u.update(u.plan.closed) }

// togglePlan closes a visible plan window and shows a hidden one.
func (u *UI) togglePlan() { u.update(u.plan.toggle) }

// resized records the editor size (the plan float is laid out from it).
func (u *UI) resized(d EditorDims) { u.update(func() { u.plan.resized(d) }) }

// Subagent implements agent.UI.
func (u *UI) Subagent(s *agent.SubagentStatus) {
	u.update(func() {
		u.activity.set(s)
		u.status.subagent(s)
	})
}

// Quit closes Fido's windows (for /quit); the conversation stays.
func (u *UI) Quit() { u.update(func() { u.input.quit = true }) }

// RestoreDraft implements agent.UI.
func (u *UI) RestoreDraft(text string) { u.update(func() { u.input.draft = &text }) }

// Notify implements agent.UI.
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
		u.update(func() { u.transcript.ToolNote(q.CallID, ":FidoShow "+q.CallID) })
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
	st := u.status.st
	st.Plan, st.Flushes = u.plan.plan, u.flushes
	return st
}

var (
	_ agent.UI    = (*UI)(nil)
	_ tools.Asker = (*UI)(nil)
)
