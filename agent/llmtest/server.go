// Package llmtest is a fake OpenAI-compatible chat-completions server for
// tests: real HTTP (httptest) and real SSE framing, scripted per request,
// recording every request it receives. It serves POST {URL()}/chat/completions
// where URL() ends in /api/v1 like OpenRouter's base URL, so it can stand in
// for OpenRouter both in-process (openrouter.Config.BaseURL) and for the
// real bin/fido binary (FIDO_BASE_URL).
//
//	srv := llmtest.NewServer(t)
//	srv.Enqueue(llmtest.Reply().Reasoning("hmm").Content("Hello").Finish("stop").Usage(10, 5, 3, 0.0012))
//	srv.Enqueue(llmtest.Reply().ToolCall("call_1", "read_file", `{"path":"a.go"}`, 3).Finish("tool_calls"))
//	srv.Enqueue(llmtest.Status(429).Header("Retry-After", "1"))
//	... point the client at srv.URL() ...
//	reqs := srv.Requests()
//
// Scripts are consumed in order, one per request; when they run out the
// default (SetDefault) answers, and without one the server answers 500 with
// an "llmtest: no scripted response" error.
package llmtest

import (
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Responder answers one request. Reply() and Status() build them.
type Responder interface {
	respond(s *Server, w http.ResponseWriter, r *http.Request, req Request)
}

// Server is the fake endpoint. It is safe for concurrent use.
type Server struct {
	hs     *httptest.Server
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	script   []Responder
	def      Responder
	requests []Request
	changed  chan struct{} // closed and replaced whenever a request is recorded
	models   string        // body of GET …/models ("" → 404)
}

// NewServer starts a server; t.Cleanup closes it. t may be nil (then call Close).
func NewServer(t testing.TB) *Server { return start(t, (*httptest.Server).Start) }

// NewTLSServer starts a server that speaks TLS with HTTP/2, as OpenRouter
// does, under a certificate for 127.0.0.1 that CertPEM returns (a client
// trusts it through SSL_CERT_FILE or its own pool). t may be nil.
func NewTLSServer(t testing.TB) *Server {
	return start(t, func(hs *httptest.Server) {
		hs.EnableHTTP2 = true
		hs.StartTLS()
	})
}

func start(t testing.TB, run func(*httptest.Server)) *Server {
	s := &Server{closed: make(chan struct{}), changed: make(chan struct{})}
	s.hs = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	run(s.hs)
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// CertPEM is the TLS server's certificate in PEM (nil for a plain server).
func (s *Server) CertPEM() []byte {
	c := s.hs.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// URL is the base URL to configure, e.g. http://127.0.0.1:41234/api/v1.
func (s *Server) URL() string { return s.hs.URL + "/api/v1" }

// Enqueue appends responders, one per future request.
func (s *Server) Enqueue(rs ...Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, rs...)
}

// SetDefault sets the responder used once the script is exhausted.
func (s *Server) SetDefault(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = r
}

// Pending is the number of scripted responders not used yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns a copy of the chat requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WaitRequests waits until at least n requests arrived and returns them, or
// returns an error after timeout.
func (s *Server) WaitRequests(n int, timeout time.Duration) ([]Request, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, ch := len(s.requests), s.changed
		if got >= n {
			out := append([]Request(nil), s.requests...)
			s.mu.Unlock()
			return out, nil
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return s.Requests(), fmt.Errorf("llmtest: %d of %d requests after %s", got, n, timeout)
		}
	}
}

// Close releases stalled handlers and stops the server. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.hs.CloseClientConnections()
		s.hs.Close()
	})
}

// SetModels makes GET …/models answer with this JSON body (the model list
// Fido reads context windows from); it is not recorded as a request.
func (s *Server) SetModels(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = body
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		s.mu.Lock()
		body := s.models
		s.mu.Unlock()
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
			return
		}
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"code":404,"message":"llmtest: only POST …/chat/completions is served"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Method: r.Method, Path: r.URL.Path, Proto: r.Proto, Header: r.Header.Clone(), Body: body}
	rec.Chat, rec.DecodeErr = DecodeChatRequest(body)

	s.mu.Lock()
	rec.Seq = len(s.requests) + 1
	s.requests = append(s.requests, rec)
	close(s.changed)
	s.changed = make(chan struct{})
	var resp Responder
	if len(s.script) > 0 {
		resp, s.script = s.script[0], s.script[1:]
	} else {
		resp = s.def
	}
	s.mu.Unlock()

	if resp == nil {
		resp = Status(http.StatusInternalServerError).Body(
			fmt.Sprintf(`{"error":{"code":500,"message":"llmtest: no scripted response for request %d"}}`, rec.Seq))
	}
	resp.respond(s, w, r, rec)
}

// waitGone blocks until the client goes away or the server closes; it
// reports whether the client went away.
func (s *Server) waitGone(r *http.Request, d time.Duration) bool {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-r.Context().Done():
		return true
	case <-s.closed:
		return true
	case <-timeout:
		return false
	}
}
