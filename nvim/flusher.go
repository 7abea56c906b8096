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
//
// A batch is bounded (see Limit): when take leaves changes for later, the
// next batch follows one interval after, without waiting for a change.
type flusher struct {
	kick     chan struct{}
	syncs    chan chan struct{} // sync's requests
	running  atomic.Bool        // run is serving (sync waits for it only then)
	stopped  chan struct{}      // closed when run returned
	epoch    time.Time          // due counts from here, on the monotonic clock
	due      atomic.Int64       // ns since epoch before which a change does not kick
	armed    atomic.Bool        // the trailing timer is set for this interval
	trailing *time.Timer

	// take returns the pending batch (nil when nothing changed) and whether
	// changes are left for the next one.
	take func() (*Batch, bool)
	send func(context.Context, *Batch) error
	logf func(string, ...any)
}

func newFlusher(take func() (*Batch, bool), send func(context.Context, *Batch) error, logf func(string, ...any)) *flusher {
	f := &flusher{kick: make(chan struct{}, 1), syncs: make(chan chan struct{}), stopped: make(chan struct{}),
		epoch: time.Now(), take: take, send: send, logf: logf}
	f.trailing = time.AfterFunc(time.Hour, f.kickNow)
	f.trailing.Stop()
	return f
}

// sync sends every pending change now, the interval notwithstanding, and
// returns once Neovim applied it: a question's picker opens only after
// the status and transcript it belongs to. It returns at once when the
// flusher is not running, and early when ctx ends.
func (f *flusher) sync(ctx context.Context) error {
	if !f.running.Load() {
		return nil
	}
	done := make(chan struct{})
	select {
	case f.syncs <- done:
	case <-f.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-f.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
	f.running.Store(true)
	defer close(f.stopped)
	defer f.trailing.Stop()
	for {
		var synced chan struct{}
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		case synced = <-f.syncs:
		}
		// A kick comes early only when a wake raced with the last flush;
		// the interval holds regardless (but not for a question waiting).
		if wait := time.Duration(f.due.Load() - f.now()); synced == nil && wait > 0 && !sleep(ctx, wait) {
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
		sent, more := f.flush(ctx)
		for synced != nil && more && ctx.Err() == nil {
			_, more = f.flush(ctx)
		}
		if synced != nil {
			close(synced)
		}
		switch {
		case more: // the rest goes one interval later
			f.kickNow()
		case !sent:
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

// flush sends the pending batch, if any, and reports whether there was one
// and whether changes are left for the next.
func (f *flusher) flush(ctx context.Context) (sent, more bool) {
	b, more := f.take()
	if b == nil {
		return false, false
	}
	if err := f.send(ctx, b); err != nil && !errors.Is(err, context.Canceled) {
		f.logf("fido: render: %v", err)
	}
	return true, more
}
