package openrouter

import (
	"sync"
	"sync/atomic"
	"time"
)

// watchdog cancels an attempt that received no data for its idle limit.
// Data lines only bump a counter (touch), so a fast stream pays one atomic
// add per line instead of a timer reset; the timer looks at the counter
// every half limit and fires after two looks without activity, that is
// between one and one and a half limits after the last data line.
type watchdog struct {
	seen   atomic.Int64
	fired  atomic.Bool
	cancel func()
	half   time.Duration

	mu      sync.Mutex // guards the fields below, used by check and stop
	timer   *time.Timer
	last    int64
	quiet   int
	stopped bool
}

func startWatchdog(idle time.Duration, cancel func()) *watchdog {
	w := &watchdog{cancel: cancel, half: max(idle/2, time.Millisecond)}
	w.mu.Lock()
	w.timer = time.AfterFunc(w.half, w.check)
	w.mu.Unlock()
	return w
}

// touch records activity: a data line or the response headers. A nil
// watchdog ignores it.
func (w *watchdog) touch() {
	if w != nil {
		w.seen.Add(1)
	}
}

// stalled reports that the watchdog cancelled the attempt.
func (w *watchdog) stalled() bool { return w.fired.Load() }

func (w *watchdog) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if n := w.seen.Load(); n != w.last {
		w.last, w.quiet = n, 0
	} else {
		w.quiet++
	}
	if w.quiet >= 2 {
		w.fired.Store(true)
		w.cancel()
		return
	}
	w.timer.Reset(w.half)
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}
