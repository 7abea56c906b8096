package llmtest

import (
	"bytes"
	"io"
	"net/http"
)

// Memory is an http.RoundTripper that answers every request with the same
// event stream from memory (a Render), for benchmarks and tests that read a
// stream without a socket: each read of the body is served at once.
type Memory []byte

// RoundTrip implements http.RoundTripper.
func (m Memory) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Generation-Id", "gen-llmtest-1")
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(bytes.NewReader(m)), ContentLength: -1, Request: r}, nil
}
