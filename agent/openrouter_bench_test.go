package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent/llmtest"
)

const benchDeltas = 20000

// memTransport answers every request with the same in-memory event stream.
type memTransport struct{ body []byte }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Generation-Id", "gen-llmtest-1")
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(bytes.NewReader(t.body)), ContentLength: -1, Request: r}, nil
}

// floorRead only splits the stream into lines and parses each data chunk
// with gjson: the least any reader of this stream must do.
func floorRead(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if p, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			p = bytes.TrimSpace(p)
			if string(p) == "[DONE]" {
				return n, nil
			}
			n += len(gjson.GetBytes(p, "choices.0.delta.content").Str)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
}

// perDelta reports ns and allocations per streamed delta.
func perDelta(b *testing.B, run func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	n := float64(b.N) * benchDeltas
	ns := float64(b.Elapsed().Nanoseconds()) / n
	b.ReportMetric(ns, "ns/delta")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/delta")
	return ns
}

// BenchmarkStreamInMemory streams 20,000 content deltas from memory through
// the floor reader and through the whole provider (HTTP from memory).
func BenchmarkStreamInMemory(b *testing.B) {
	body := llmtest.Reply().ContentDeltas(benchDeltas, "tok ").Finish("stop").Usage(10, benchDeltas, 0, 0.01).Render(1, "test/model")
	var floor float64
	b.Run("floor", func(b *testing.B) {
		floor = perDelta(b, func() {
			if n, err := floorRead(bytes.NewReader(body)); err != nil || n != 4*benchDeltas {
				b.Fatalf("n=%d err=%v", n, err)
			}
		})
	})
	b.Run("provider", func(b *testing.B) {
		p := NewOpenRouter(OpenRouterConfig{BaseURL: "http://mem/api/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: memTransport{body}}})
		ns := perDelta(b, func() {
			n := 0
			resp, err := p.Stream(context.Background(), userRequest("hi"), func(Delta) { n++ })
			if err != nil || n != benchDeltas || len(resp.Message.Content) != 4*benchDeltas {
				b.Fatalf("err=%v deltas=%d", err, n)
			}
		})
		if floor > 0 {
			b.ReportMetric(ns/floor, "x_floor")
		}
	})
}
