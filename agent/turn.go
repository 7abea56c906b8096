package agent

import (
	"context"
	"sync"
)

// turnSlot is the session's one turn at a time: whether a turn runs (a
// compaction holds the session like one), how to cancel it, the draft it
// came from, the messages queued behind it, and the turn state the screen
// shows. Every turn opens with begin or admit and closes with end, then
// finish. The slot's lock is the session's outermost: the other concerns'
// locks are taken inside it and never the other way round, so whatever
// holds it (a turn starting or ending, a conversation switching) sees the
// session at rest.
type turnSlot struct {
	mu        sync.Mutex
	running   bool
	cancelled bool // the running turn was cancelled and is unwinding
	closed    bool
	cancel    context.CancelFunc
	draft     string
	done      chan struct{}
	// gen numbers the turns; a turn's events carry it, so the late end of
	// a cancelled turn never moves the state of the turn after it.
	gen int
	// queued are messages submitted while a turn ran; they go out together
	// as the next user message when it ends.
	queued []string
	// subShown: the subagent bar shows a finished subagent until the next
	// turn starts.
	subShown bool

	// stateMu orders state changes with their SetState calls: the screen
	// sees them in the order the reducer made them. Taken before mu.
	stateMu sync.Mutex
	state   TurnState
	screen  interface{ SetState(TurnState) }
}

func newTurnSlot(screen interface{ SetState(TurnState) }) *turnSlot {
	return &turnSlot{state: StateIdle, screen: screen}
}

// turn is one running turn (or compaction).
type turn struct {
	slot   *turnSlot
	ctx    context.Context
	cancel context.CancelFunc
	gen    int
	done   chan struct{}
	// clearBar: the bar still showed the previous turn's subagent.
	clearBar bool
}

// openLocked starts a turn. Called with t.mu held and no turn running.
func (t *turnSlot) openLocked(draft string) *turn {
	ctx, cancel := context.WithCancel(context.Background())
	t.running, t.cancel, t.draft = true, cancel, draft
	t.gen++
	tr := &turn{slot: t, ctx: ctx, cancel: cancel, gen: t.gen, done: make(chan struct{}), clearBar: t.subShown}
	t.done, t.subShown = tr.done, false
	return tr
}

// begin opens a turn when the slot is free (a compaction): prepare runs
// under the slot's lock and may decline by returning false. nil when a
// turn runs, the session is closed or prepare declined.
func (t *turnSlot) begin(draft string, prepare func() bool) *turn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running || t.closed || !prepare() {
		return nil
	}
	return t.openLocked(draft)
}

// admission says what became of a message.
type admission struct {
	// turn is the turn it started.
	turn *turn
	// queued > 0: it waits behind the running turn, at that place.
	queued int
	// after is set when a cancelled turn is still unwinding: the message
	// starts once after is closed.
	after chan struct{}
}

// admit starts a turn for a message, or queues it behind the running one.
// prepare runs under the slot's lock before the turn starts and may
// decline it (returning false). All zero: the session is closed, or
// prepare declined.
func (t *turnSlot) admit(text string, prepare func() bool) admission {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return admission{}
	case t.running && t.cancelled:
		// The cancelled turn is unwinding (its tools are being answered
		// "cancelled"): the new message starts right after it, so a cancel
		// never leaves the user facing "still working".
		return admission{after: t.done}
	case t.running:
		t.queued = append(t.queued, text)
		return admission{queued: len(t.queued)}
	case !prepare():
		return admission{}
	}
	return admission{turn: t.openLocked(text)}
}

// end frees the slot: commit runs under its lock first (the turn's results
// go back into the conversation). It returns the messages queued behind
// the turn, to be sent as the next one.
func (t *turnSlot) end(tr *turn, commit func()) (queued []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if commit != nil {
		commit()
	}
	t.running, t.cancelled, t.cancel, t.draft = false, false, nil, ""
	queued, t.queued = t.queued, nil
	return queued
}

// finish releases what still waits on the turn's context and wakes Wait;
// it comes last, after everything the turn shows.
func (tr *turn) finish() {
	tr.cancel()
	close(tr.done)
}

// interrupt cancels the running turn unless it is already unwinding. It
// returns what the turn came from and what was queued behind it (they go
// back into the input) and the turn's generation; ok is false when there
// was nothing to cancel.
func (t *turnSlot) interrupt() (draft string, queued []string, gen int, ok bool) {
	t.mu.Lock()
	cancel, ok := t.cancel, t.running && !t.cancelled
	if ok {
		t.cancelled = true
		draft, queued, gen = t.draft, t.queued, t.gen
		t.queued = nil
	}
	t.mu.Unlock()
	if ok {
		cancel()
	}
	return draft, queued, gen, ok
}

// close cancels any turn; later messages are ignored.
func (t *turnSlot) close() {
	t.mu.Lock()
	t.closed = true
	cancel := t.cancel
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// idle runs f under the slot's lock when no turn runs (a conversation
// switching), and reports whether it did.
func (t *turnSlot) idle(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		return false
	}
	f()
	return true
}

// either runs whenIdle or whenBusy under the slot's lock, by whether a
// turn runs (a synthetic message is added now or after the turn).
func (t *turnSlot) either(whenIdle, whenBusy func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		whenBusy()
	} else {
		whenIdle()
	}
}

func (t *turnSlot) busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running
}

// wait blocks until the running turn (if any) has finished.
func (t *turnSlot) wait() {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	if done != nil {
		<-done
	}
}

// showSubagent records whether the bar shows a subagent.
func (t *turnSlot) showSubagent(shown bool) {
	t.mu.Lock()
	t.subShown = shown
	t.mu.Unlock()
}

// setState puts turn gen in state st (a compaction, which has no model
// stream to drive the reducer); nothing happens when another turn began.
func (t *turnSlot) setState(gen int, st TurnState) {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	t.mu.Lock()
	if gen != t.gen {
		t.mu.Unlock()
		return
	}
	t.state = st
	t.mu.Unlock()
	t.screen.SetState(st)
}

// event moves the state of turn gen; an event of an earlier turn (a
// cancelled turn finishing after the next one started) changes nothing.
func (t *turnSlot) event(gen int, ev TurnEvent) {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	t.mu.Lock()
	if gen != t.gen {
		t.mu.Unlock()
		return
	}
	old := t.state
	t.state = Reduce(old, ev)
	now := t.state
	t.mu.Unlock()
	if now != old || ev == EvTurnStart {
		t.screen.SetState(now)
	}
}

func (tr *turn) event(ev TurnEvent)    { tr.slot.event(tr.gen, ev) }
func (tr *turn) setState(st TurnState) { tr.slot.setState(tr.gen, st) }
