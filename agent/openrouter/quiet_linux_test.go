package openrouter

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
)

func rcvlowat(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	require.NoError(t, err)
	var v int
	require.NoError(t, rc.Control(func(fd uintptr) {
		v, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT)
	}))
	require.NoError(t, err)
	return v
}

// quieter raises and restores a TCP socket's SO_RCVLOWAT.
func TestQuieterSetsAndRestoresTheLowWaterMark(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	q := quieter(c)
	require.NotNil(t, q)
	assert.Equal(t, 1, rcvlowat(t, c))
	q(true)
	assert.Equal(t, quietLowat, rcvlowat(t, c))
	q(false)
	assert.Equal(t, 1, rcvlowat(t, c))
	assert.Nil(t, quieter(&net.UnixConn{}), "not a socket it can reach: no quieter")
}

// A paced stream leaves its kept-alive connection as it found it: the next
// answer on it arrives piece by piece, not held until 64 KB or its end.
func TestPacedStreamLeavesTheConnectionReadable(t *testing.T) {
	srv := llmtest.NewServer(t)
	enqueueSlowStream(srv)
	srv.Enqueue(llmtest.Reply().Content("first").Pause(600 * time.Millisecond).Content(" last").Finish("stop"))
	var dials atomic.Int32
	tr := NewTransport()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	// A socket left quiet would hold the pieces until the idle timeout.
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey, ReadPace: 40 * time.Millisecond, IdleTimeout: 5 * time.Second,
		HTTPClient: &http.Client{Transport: tr}})
	_, err := p.Stream(context.Background(), userRequest("hi"), func(agent.Delta) {})
	require.NoError(t, err)

	start := time.Now()
	first := make(chan time.Duration, 1)
	resp, err := New(Config{BaseURL: srv.URL(), APIKey: testKey, IdleTimeout: 5 * time.Second, HTTPClient: &http.Client{Transport: tr}}).
		Stream(context.Background(), userRequest("again"), func(d agent.Delta) {
			if d.Kind == agent.DeltaContent {
				select {
				case first <- time.Since(start):
				default:
				}
			}
		})
	require.NoError(t, err)
	assert.Equal(t, "first last", resp.Message.Content)
	assert.Equal(t, int32(1), dials.Load(), "both answers came over one connection")
	assert.Less(t, <-first, 400*time.Millisecond, "the first piece arrived before the pause, not with the end")
}
