package nvim

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// FlushInterval is the least time between two flushes into Neovim.
const FlushInterval = 30 * time.Millisecond

// flushSlack is how long past FlushInterval a change may wait for a later
// one to carry its flush (see flusher); a stream of ~190 deltas/s sends one
// every 5 ms, so in a stream the slack is never used.
const flushSlack = FlushInterval / 2

// flusher sends the UI's pending changes to Neovim: one batch in flight,
// the next one collecting whatever changes meanwhile, at most one batch per
// FlushInterval.
//
// A change after the interval wakes the flushing goroutine at once. A
// change within it only arms a trailing timer, due flushSlack after the
// interval, which the next change past the interval makes moot. While a
// model streams, the flushes thus ride on the deltas' own wakeups instead
// of a timer's: the host spends more on waking up than on the bytes.
type flusher struct {
	kick     chan struct{}
	epoch    time.Time    // due counts from here, on the monotonic clock
	due      atomic.Int64 // ns since epoch before which a change does not kick
	armed    atomic.Bool  // the trailing timer is set for this interval
	trailing *time.Timer

	take func() *Batch // the pending batch, nil when nothing changed
	send func(context.Context, *Batch) error
	logf func(string, ...any)
}

func newFlusher(take func() *Batch, send func(context.Context, *Batch) error, logf func(string, ...any)) *flusher {
	f := &flusher{kick: make(chan struct{}, 1), epoch: time.Now(), take: take, send: send, logf: logf}
	f.trailing = time.AfterFunc(time.Hour, f.kickNow)
	f.trailing.Stop()
	return f
}

// wake schedules a flush for a change; it never blocks.
func (f *flusher) wake() {
	now := f.now()
	if due := f.due.Load(); now < due {
		if f.armed.CompareAndSwap(false, true) {
			f.trailing.Reset(time.Duration(due-now) + flushSlack)
		}
		return
	}
	f.kickNow()
}

// now is the time since epoch in ns; a wall-clock step does not move it.
func (f *flusher) now() int64 { return int64(time.Since(f.epoch)) }

func (f *flusher) kickNow() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// run sends a batch whenever woken, until ctx ends.
func (f *flusher) run(ctx context.Context) {
	defer f.trailing.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		}
		// A kick comes early only when a wake raced with the last flush;
		// the interval holds regardless.
		if wait := time.Duration(f.due.Load() - f.now()); wait > 0 && !sleep(ctx, wait) {
			return
		}
		f.trailing.Stop()
		f.armed.Store(false)
		// Changes from here on wait for the interval (or the trailing
		// timer). Those made before the take below are in this batch,
		// so a kick they left is spent.
		f.due.Store(f.now() + int64(FlushInterval))
		select {
		case <-f.kick:
		default:
		}
		if !f.flush(ctx) {
			f.due.Store(0) // nothing was sent: the next change need not wait
		}
	}
}

// sleep waits for d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// flush sends the pending batch, if any, and reports whether there was one.
func (f *flusher) flush(ctx context.Context) bool {
	b := f.take()
	if b == nil {
		return false
	}
	if err := f.send(ctx, b); err != nil && !errors.Is(err, context.Canceled) {
		f.logf("fido: render: %v", err)
	}
	return true
}
