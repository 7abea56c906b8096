package openrouter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Activity keeps the watchdog quiet; silence fires it no sooner than the
// limit after the last activity, and soon after.
func TestWatchdog(t *testing.T) {
	const idle = 400 * time.Millisecond
	fired := make(chan time.Time, 1)
	wd := startWatchdog(idle, func() { fired <- time.Now() })
	defer wd.stop()
	var last time.Time
	for range 20 {
		time.Sleep(idle / 16)
		last = time.Now()
		wd.touch()
		require.False(t, wd.stalled(), "activity every sixteenth of the limit")
	}
	select {
	case at := <-fired:
		assert.True(t, wd.stalled())
		assert.GreaterOrEqual(t, at.Sub(last), idle, "never before the limit")
	case <-time.After(3 * time.Second):
		t.Fatal("the watchdog did not fire")
	}
}

// A stopped watchdog never fires.
func TestWatchdogStop(t *testing.T) {
	wd := startWatchdog(20*time.Millisecond, func() { t.Error("fired after stop") })
	wd.stop()
	time.Sleep(60 * time.Millisecond)
	assert.False(t, wd.stalled())
}
