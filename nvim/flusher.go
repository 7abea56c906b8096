package nvim

import (
	"context"
	"errors"
	"time"
)

// FlushInterval is the least time between two flushes into Neovim.
const FlushInterval = 30 * time.Millisecond

// flusher sends the UI's pending changes to Neovim: one batch in flight,
// the next one collecting whatever changes meanwhile, at most one batch per
// FlushInterval. A change only wakes it (wake never blocks); the goroutine
// in run does the sending.
type flusher struct {
	kick chan struct{}
	take func() *Batch // the pending batch, nil when nothing changed
	send func(context.Context, *Batch) error
	logf func(string, ...any)
}

func newFlusher(take func() *Batch, send func(context.Context, *Batch) error, logf func(string, ...any)) *flusher {
	return &flusher{kick: make(chan struct{}, 1), take: take, send: send, logf: logf}
}

// wake schedules a flush.
func (f *flusher) wake() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// run sends a batch when woken, then waits out the interval, so changes
// arriving meanwhile coalesce into the next batch. It returns when ctx ends.
func (f *flusher) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		}
		start := time.Now()
		f.flush(ctx)
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

// flush sends the pending batch, if any.
func (f *flusher) flush(ctx context.Context) {
	if b := f.take(); b != nil {
		if err := f.send(ctx, b); err != nil && !errors.Is(err, context.Canceled) {
			f.logf("fido: render: %v", err)
		}
	}
}
