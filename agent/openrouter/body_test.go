package openrouter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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

// trust is a pool holding srv's TLS certificate.
func trust(t *testing.T, srv *llmtest.Server) *x509.CertPool {
	t.Helper()
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(srv.CertPEM()))
	return roots
}

// enqueueSlowStream scripts 100 pieces 4 ms apart and returns their text.
func enqueueSlowStream(srv *llmtest.Server) string {
	r := llmtest.Reply().Pace(4 * time.Millisecond)
	var want strings.Builder
	for i := range 100 {
		piece := fmt.Sprintf("p%d ", i)
		r.Content(piece)
		want.WriteString(piece)
	}
	srv.Enqueue(r.Finish("stop"))
	return want.String()
}

// A slow stream is read once per pace, not once per piece, and every piece
// still arrives, in order.
func TestReadPaceReadsASlowStreamInBatches(t *testing.T) {
	srv := llmtest.NewServer(t)
	want := enqueueSlowStream(srv)
	var reads atomic.Int32
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey, ReadPace: 40 * time.Millisecond,
		HTTPClient: &http.Client{Transport: countingTransport{http.DefaultTransport, &reads}}})
	log := &deltaLog{}
	start := time.Now()
	resp, err := p.Stream(context.Background(), userRequest("hi"), log.add)
	require.NoError(t, err)
	took := time.Since(start)
	assert.Equal(t, want, resp.Message.Content)
	assert.Equal(t, []agent.Delta{{Kind: agent.DeltaContent, Text: want}}, log.joined())
	// 100 pieces 4 ms apart: unpaced, a read (and a delta) each.
	assert.Less(t, int(reads.Load()), 40, "reads")
	assert.Less(t, len(log.all()), 40, "deltas")
	assert.Less(t, took, 2*time.Second)
}

// Over TLS and HTTP/2 (a client of the user's that speaks it), the same slow
// stream arrives whole and in order, still in batches (the body is then a
// pipe that HTTP/2's read loop fills).
func TestReadPaceOverTLSAndHTTP2(t *testing.T) {
	srv := llmtest.NewTLSServer(t)
	want := enqueueSlowStream(srv)
	base := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: trust(t, srv)}, ForceAttemptHTTP2: true}
	t.Cleanup(base.CloseIdleConnections)
	var reads atomic.Int32
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey, ReadPace: 40 * time.Millisecond,
		HTTPClient: &http.Client{Transport: countingTransport{base, &reads}}})
	log := &deltaLog{}
	resp, err := p.Stream(context.Background(), userRequest("hi"), log.add)
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "HTTP/2.0", reqs[0].Proto)
	assert.Equal(t, want, resp.Message.Content)
	assert.Equal(t, []agent.Delta{{Kind: agent.DeltaContent, Text: want}}, log.joined())
	assert.Less(t, int(reads.Load()), 40, "reads")
}

// The default transport speaks HTTP/1.1 even to a server offering HTTP/2,
// whatever Go's default transport did before (see NewTransport), and keeps
// the environment's proxy.
func TestDefaultTransportSpeaksHTTP1(t *testing.T) {
	def := New(Config{}).cfg.HTTPClient.Transport.(*http.Transport)
	require.NotNil(t, def.Protocols)
	assert.True(t, def.Protocols.HTTP1())
	assert.False(t, def.Protocols.HTTP2(), "no HTTP/2")
	assert.NotNil(t, def.Proxy, "the environment's proxy")

	srv := llmtest.NewTLSServer(t)
	srv.Enqueue(llmtest.Reply().Pace(time.Millisecond).ContentDeltas(20, "ab").Finish("stop"))
	// Go's default transport, once it has dialled TLS (here it fails to
	// verify the test certificate), offers h2 in its TLS config: a copy of
	// it would agree on HTTP/2 and then talk HTTP/1.1.
	if resp, err := http.DefaultClient.Get(srv.URL() + "/models"); err == nil {
		resp.Body.Close()
	}
	tr := NewTransport()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.RootCAs = trust(t, srv)
	t.Cleanup(tr.CloseIdleConnections)
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey, ReadPace: 10 * time.Millisecond, HTTPClient: &http.Client{Transport: tr}})
	resp, err := p.Stream(context.Background(), userRequest("hi"), func(agent.Delta) {})
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("ab", 20), resp.Message.Content)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "HTTP/1.1", reqs[0].Proto)
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
