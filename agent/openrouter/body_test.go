package openrouter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
)

// countingBody counts the reads of a body.
type countingBody struct {
	io.ReadCloser
	reads *atomic.Int32
}

func (b countingBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.ReadCloser.Read(p)
}

type countingTransport struct {
	base  http.RoundTripper
	reads *atomic.Int32
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, t.reads}
	}
	return resp, err
}

// A slow stream is read once per pace, not once per piece, and every piece
// still arrives, in order.
func TestReadPaceReadsASlowStreamInBatches(t *testing.T) {
	srv := llmtest.NewServer(t)
	r := llmtest.Reply().Pace(4 * time.Millisecond)
	var want strings.Builder
	for i := range 100 {
		piece := fmt.Sprintf("p%d ", i)
		r.Content(piece)
		want.WriteString(piece)
	}
	srv.Enqueue(r.Finish("stop"))
	var reads atomic.Int32
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey, ReadPace: 40 * time.Millisecond,
		HTTPClient: &http.Client{Transport: countingTransport{http.DefaultTransport, &reads}}})
	log := &deltaLog{}
	start := time.Now()
	resp, err := p.Stream(context.Background(), userRequest("hi"), log.add)
	require.NoError(t, err)
	took := time.Since(start)
	assert.Equal(t, want.String(), resp.Message.Content)
	assert.Equal(t, []agent.Delta{{Kind: agent.DeltaContent, Text: want.String()}}, log.joined())
	// 100 pieces 4 ms apart: unpaced, a read (and a delta) each.
	assert.Less(t, int(reads.Load()), 40, "reads")
	assert.Less(t, len(log.all()), 40, "deltas")
	assert.Less(t, took, 2*time.Second)
}

// A stream that keeps the reader busy is never slowed down by the pace:
// of some 150 reads from memory, none (or, on a loaded machine, one that
// was preempted) waits.
func TestReadPaceDoesNotSlowAFastStream(t *testing.T) {
	body := llmtest.Reply().ContentDeltas(20000, "tok ").Finish("stop").Render(1, "test/model")
	pace := 200 * time.Millisecond
	p := New(Config{BaseURL: "http://mem/api/v1", APIKey: testKey, ReadPace: pace,
		HTTPClient: &http.Client{Transport: llmtest.Memory(body)}})
	start := time.Now()
	resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
	require.NoError(t, err)
	assert.Len(t, resp.Message.Content, 80000)
	assert.Less(t, time.Since(start), 10*pace, "paced like a slow stream")
}

// A cancel ends the wait between two reads at once.
func TestReadPaceWaitEndsOnCancel(t *testing.T) {
	srv := llmtest.NewServer(t)
	// "b" comes after a pause, so its read waited: the read after it
	// waits for the hour's pace (the stream stalls there anyway).
	srv.Enqueue(llmtest.Reply().Content("a").Pause(50 * time.Millisecond).Content("b").Stall())
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey, ReadPace: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	texts := make(chan string, 4)
	got := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, userRequest("hi"), func(d agent.Delta) { texts <- d.Text })
		got <- err
	}()
	// "b" is handed on just before the wait begins.
	for text := ""; text != "ab"; {
		select {
		case d := <-texts:
			text += d
		case <-time.After(3 * time.Second):
			t.Fatalf("only %q arrived", text)
		}
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-got:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(3 * time.Second):
		t.Fatal("the wait did not end on cancel")
	}
}
