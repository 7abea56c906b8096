package openrouter

import (
	"context"
	"io"
	"time"
)

// blockedRead is how long a read must have waited for the sender to count
// as having caught up with the stream.
const blockedRead = time.Millisecond

// streamBody is the response body as the event reader reads it. Before each
// read it hands on the text waiting in the accumulator (flush), so nothing
// is held back while the reader waits for more of the stream.
//
// With pace set, a reader that has caught up with a slow stream reads it
// at most once per pace: after a read that waited for the sender (took a
// millisecond or more and did not fill the buffer), the next read waits
// until pace has passed. A model writing 190 pieces a second
// then costs a wakeup (and the runtime's monitor its polling) every pace
// instead of every piece, while the screen, which shows changes at most
// every FlushInterval anyway, sees no difference. A stream that keeps the
// reader busy (every read finds data at once) is never slowed. The end of
// ctx (a cancel, the idle watchdog) ends a wait.
//
// While it waits, quiet (when set: an HTTP/1.1 response's own socket on
// Linux) has the kernel hold the pieces arriving meanwhile without waking
// the process: Go's poller would otherwise wake for each of them though
// nobody reads, a context switch per piece.
type streamBody struct {
	r     io.Reader
	flush func()
	pace  time.Duration
	ctx   context.Context // ends a wait
	quiet func(bool)      // nil: wait without it

	next  time.Time // no read before this
	timer *time.Timer
}

func (b *streamBody) Read(p []byte) (int, error) {
	b.flush()
	if b.pace <= 0 {
		return b.r.Read(p)
	}
	if wait := time.Until(b.next); wait > 0 {
		if b.timer == nil {
			b.timer = time.NewTimer(wait)
		} else {
			b.timer.Reset(wait)
		}
		if b.quiet != nil {
			b.quiet(true)
		}
		select {
		case <-b.ctx.Done():
			b.timer.Stop()
		case <-b.timer.C:
		}
		if b.quiet != nil {
			b.quiet(false) // before any read: the connection may serve another request
		}
		if err := b.ctx.Err(); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	n, err := b.r.Read(p)
	// A read that waited and brought less than it could take caught up
	// with the sender. (A full read means more may be waiting; a read
	// that merely took long, the process preempted, is rare, and costs
	// one wait.)
	if now := time.Now(); n < len(p) && now.Sub(start) >= blockedRead {
		b.next = now.Add(b.pace)
	}
	return n, err
}

// close releases the timer.
func (b *streamBody) close() {
	if b.timer != nil {
		b.timer.Stop()
	}
}
