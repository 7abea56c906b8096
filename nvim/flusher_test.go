package nvim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingFlusher is a flusher whose batches count the changes they carry.
type countingFlusher struct {
	*flusher
	mu      sync.Mutex
	per     int // at most this many changes per batch (0: all), the rest left for the next
	pending int
	sent    []int       // changes per batch
	at      []time.Time // when each batch was sent
}

func newCountingFlusher(t *testing.T) *countingFlusher {
	c := &countingFlusher{}
	c.flusher = newFlusher(func() (*Batch, bool) {
		// The time the flusher takes the batch, read before the lock: a
		// burst of change() calls contends for it and would delay the
		// reading, not the flush.
		now := time.Now()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending == 0 {
			return nil, false
		}
		n := c.pending
		if c.per > 0 {
			n = min(n, c.per)
		}
		c.sent, c.at = append(c.sent, n), append(c.at, now)
		c.pending -= n
		return &Batch{}, c.pending > 0
	}, func(context.Context, *Batch) error { return nil }, t.Logf)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return c
}

func (c *countingFlusher) change() {
	c.mu.Lock()
	c.pending++
	c.mu.Unlock()
	c.wake()
}

func (c *countingFlusher) batches() ([]int, []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.sent...), append([]time.Time(nil), c.at...)
}

func (c *countingFlusher) waitChanges(t *testing.T, n int) ([]int, []time.Time) {
	t.Helper()
	require.Eventually(t, func() bool {
		sent, _ := c.batches()
		total := 0
		for _, s := range sent {
			total += s
		}
		return total == n
	}, 5*time.Second, time.Millisecond, "every change reaches a batch")
	return c.batches()
}

// A change after a quiet spell goes out at once; changes within the
// interval after it coalesce into the next batch.
func TestFlusherSendsAtOnceThenCoalesces(t *testing.T) {
	c := newCountingFlusher(t)
	start := time.Now()
	c.change()
	_, at := c.waitChanges(t, 1)
	// Held back, it would wait for the trailing timer (FlushInterval and
	// its slack); the bound leaves room for a loaded machine.
	assert.Less(t, at[0].Sub(start), FlushInterval+flushSlack, "the first change is not held back")
	for i := 0; i < 50; i++ {
		c.change()
	}
	sent, at := c.waitChanges(t, 51)
	assert.Equal(t, []int{1, 50}, sent)
	assertSpaced(t, at)
}

// A lone change within the interval is sent by the trailing timer, no later
// than the interval and its slack (with room for a loaded machine).
func TestFlusherTrailingChange(t *testing.T) {
	c := newCountingFlusher(t)
	c.change()
	c.waitChanges(t, 1)
	changed := time.Now()
	c.change()
	_, at := c.waitChanges(t, 2)
	assert.Less(t, at[1].Sub(changed), FlushInterval+flushSlack+200*time.Millisecond)
	assertSpaced(t, at)
}

// A steady stream (a change every 5 ms, like 190 deltas/s) is flushed by
// the changes themselves: batches at least an interval apart, each carrying
// several changes, none lost.
func TestFlusherSteadyStream(t *testing.T) {
	c := newCountingFlusher(t)
	const n = 60
	for i := 0; i < n; i++ {
		c.change()
		time.Sleep(5 * time.Millisecond)
	}
	sent, at := c.waitChanges(t, n)
	assert.Less(t, len(sent), n/3, "coalesced: %v", sent)
	assertSpaced(t, at)
}

// Changes as fast as one goroutine can make them, for 200 ms: a handful
// of batches, never closer than the interval.
func TestFlusherBurst(t *testing.T) {
	c := newCountingFlusher(t)
	n := 0
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); n++ {
		c.change()
	}
	sent, at := c.waitChanges(t, n)
	assert.LessOrEqual(t, len(sent), 9, "coalesced: %v", sent)
	assertSpaced(t, at)
}

// assertSpaced checks that batches are an interval apart. The interval
// starts just before a batch is taken, hence the tolerance.
func assertSpaced(t *testing.T, at []time.Time) {
	t.Helper()
	for i := 1; i < len(at); i++ {
		assert.GreaterOrEqual(t, at[i].Sub(at[i-1]), FlushInterval*9/10, "batch %d came early", i)
	}
}

// A batch that could not carry every change (its transcript over the
// Limit) is followed by the next one an interval later, without another
// change waking the flusher, until everything is sent.
func TestFlusherSendsWhatIsLeftAnIntervalLater(t *testing.T) {
	c := newCountingFlusher(t)
	c.mu.Lock()
	c.per = 10
	c.mu.Unlock()
	for i := 0; i < 45; i++ {
		c.change()
	}
	sent, at := c.waitChanges(t, 45)
	assert.Equal(t, 45, sum(sent))
	assert.LessOrEqual(t, sent[len(sent)-1], 10)
	for _, n := range sent {
		assert.LessOrEqual(t, n, 10, "%v", sent)
	}
	assertSpaced(t, at)
}

// sync sends what is pending at once, the interval notwithstanding, every
// part of it, and returns once it was sent.
func TestFlusherSyncSendsEverythingNow(t *testing.T) {
	c := newCountingFlusher(t)
	c.change()
	c.waitChanges(t, 1)
	c.mu.Lock()
	c.per = 3
	c.pending = 7 // within the interval: no wake would send them yet
	c.mu.Unlock()
	start := time.Now()
	require.NoError(t, c.sync(context.Background()))
	sent, at := c.batches()
	assert.Equal(t, []int{1, 3, 3, 1}, sent, "all sent when sync returns")
	assert.Less(t, at[1].Sub(start), FlushInterval/2, "not held back by the interval")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, newFlusher(func() (*Batch, bool) { return nil, false }, nil, t.Logf).sync(ctx),
		"a flusher that does not run has nothing to wait for")
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}
