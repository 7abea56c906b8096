package openrouter

import (
	"sync"
	"sync/atomic"
	"time"
)

// watchdog cancels an attempt that received no data for its idle limit.
// Data lines only bump a counter (touch), so a fast stream pays one atomic
// add per line instead of a timer reset or a clock read; the timer looks at
// the counter every quarter of the limit and fires after watchdogLooks
// looks in a row without activity: between one and one and a quarter
// limits after the last data line.
type watchdog struct {
	seen   atomic.Int64
	fired  atomic.Bool
	cancel func()
	every  time.Duration

	mu      sync.Mutex // guards the fields below, used by check and stop
	timer   *time.Timer
	last    int64
	quiet   int
	stopped bool
}

// watchdogLooks is how many looks without activity make a stall.
const watchdogLooks = 4

func startWatchdog(idle time.Duration, cancel func()) *watchdog {
	w := &watchdog{cancel: cancel, every: max(idle/watchdogLooks, time.Millisecond)}
	w.mu.Lock()
	w.timer = time.AfterFunc(w.every, w.check)
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
	if w.quiet >= watchdogLooks {
		w.fired.Store(true)
		w.cancel()
		return
	}
	w.timer.Reset(w.every)
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}
