package toolstest

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// heapLimit is the heap a bounded wait tolerates before it stops the
// process: a runaway read (of a FIFO, /dev/zero, a sparse file) cannot be
// interrupted, and would otherwise take the machine's memory.
const heapLimit = 512 << 20

// WaitBounded waits at most d for done. It fails t when d passes first,
// and stops the process when the heap grows past 512 MiB meanwhile.
func WaitBounded(t testing.TB, d time.Duration, what string, done <-chan struct{}) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for {
		select {
		case <-done:
			return
		case <-deadline:
			t.Fatalf("%s did not return within %v", what, d)
		case <-tick.C:
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > heapLimit {
				panic(fmt.Sprintf("%s: heap grew past %d MiB", what, heapLimit>>20))
			}
		}
	}
}

// Bounded runs fn in a goroutine and waits for it as WaitBounded does.
func Bounded(t testing.TB, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	WaitBounded(t, d, what, done)
}

// Slow marks a test that -short skips: an agreement test against a
// reference implementation, a loop over a large table, a real build. The
// full run (make test) keeps them.
func Slow(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
}
