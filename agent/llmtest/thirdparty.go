package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// This file holds what the two fakes for third-party agents share: the
// Anthropic Messages API (AnthropicServer, for Claude Code and its ACP
// adapters) and the OpenAI Responses API (ResponsesServer, for Codex and
// codex-acp). Such an agent sends requests of its own besides its agent loop
// (titles, token counts, probes), so each fake scripts only the loop's
// requests — the ones its Loop predicate accepts — in order, and answers
// every other request with its side reply.

// APIRequest is one request a third-party fake received.
type APIRequest struct {
	// Seq numbers every request from 1 in arrival order; LoopSeq numbers the
	// loop requests from 1 (0 for a side request).
	Seq, LoopSeq int
	Method, Path string // Path includes the query, e.g. "/v1/messages?beta=true"
	Header       http.Header
	Body         []byte
}

// Get reads a field of the JSON body with a gjson path, e.g. "tools.#.name".
func (r APIRequest) Get(path string) gjson.Result { return gjson.GetBytes(r.Body, path) }

// Loop reports whether the request was scripted (part of the agent loop).
func (r APIRequest) Loop() bool { return r.LoopSeq > 0 }

type responder interface {
	respond(w http.ResponseWriter, r *http.Request, req APIRequest, closed <-chan struct{})
}

// fake is the recording, scripted HTTP server under both fakes.
type fake struct {
	hs     *httptest.Server
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	loop     func(APIRequest) bool
	script   []responder
	def      responder // loop requests once the script is used up (nil → 500)
	side     responder // every request that is not a loop request
	requests []APIRequest
	loops    int
	changed  chan struct{}
}

func newFake(t testing.TB, loop func(APIRequest) bool, side responder) *fake {
	f := &fake{closed: make(chan struct{}), changed: make(chan struct{}), loop: loop, side: side}
	f.hs = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	if t != nil {
		t.Cleanup(f.Close)
	}
	return f
}

// Close releases stalled handlers and stops the server. It is idempotent.
func (f *fake) Close() {
	f.once.Do(func() {
		close(f.closed)
		f.hs.CloseClientConnections()
		f.hs.Close()
	})
}

func (f *fake) enqueue(rs ...responder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, rs...)
}

func (f *fake) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.script)
}

func (f *fake) snapshot(loopOnly bool) []APIRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []APIRequest
	for _, r := range f.requests {
		if !loopOnly || r.Loop() {
			out = append(out, r)
		}
	}
	return out
}

// waitLoop waits until n loop requests arrived and returns the loop requests.
func (f *fake) waitLoop(n int, timeout time.Duration) ([]APIRequest, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		got, ch := f.loops, f.changed
		f.mu.Unlock()
		if got >= n {
			return f.snapshot(true), nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return f.snapshot(true), fmt.Errorf("llmtest: %d of %d loop requests after %s", got, n, timeout)
		}
	}
}

func (f *fake) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := APIRequest{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
	f.mu.Lock()
	req.Seq = len(f.requests) + 1
	isLoop := f.loop(req)
	var resp responder
	if isLoop {
		f.loops++
		req.LoopSeq = f.loops
		if len(f.script) > 0 {
			resp, f.script = f.script[0], f.script[1:]
		} else {
			resp = f.def
		}
	} else {
		resp = f.side
	}
	f.requests = append(f.requests, req)
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	if resp == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, `{"type":"error","error":{"type":"api_error","message":"llmtest: no scripted response for loop request %d"}}`, req.LoopSeq)
		return
	}
	resp.respond(w, r, req, f.closed)
}

// sseWriter writes named SSE events ("event: NAME\ndata: JSON\n\n"), each
// flushed on its own.
type sseWriter struct {
	w      http.ResponseWriter
	r      *http.Request
	closed <-chan struct{}
	pace   time.Duration
}

func startSSE(w http.ResponseWriter, r *http.Request, closed <-chan struct{}) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	return &sseWriter{w: w, r: r, closed: closed}
}

// wait sleeps d unless the client or the server goes away first (false).
func (s *sseWriter) wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.r.Context().Done():
		return false
	case <-s.closed:
		return false
	case <-t.C:
		return true
	}
}

func (s *sseWriter) event(name string, v any) bool {
	if !s.wait(s.pace) {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		return false
	}
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
	return true
}

// stall holds the stream open until the client or the server goes away, then
// aborts it so that it never looks finished.
func (s *sseWriter) stall() {
	select {
	case <-s.r.Context().Done():
	case <-s.closed:
	}
	panic(http.ErrAbortHandler)
}

// rawJSON is a JSON value given as text; invalid text panics at build time
// so a broken script fails where it is written.
func rawJSON(s string) json.RawMessage {
	if s == "" {
		s = "{}"
	}
	if !json.Valid([]byte(s)) {
		panic(fmt.Sprintf("llmtest: invalid JSON %q", s))
	}
	return json.RawMessage(s)
}
