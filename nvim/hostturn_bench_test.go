//go:build unix

package nvim

import (
	"bytes"
	"context"
	"net/http"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/neovim/go-client/msgpack"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/conversation"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/agent/openrouter"
	"github.com/fido-nvim/fido/tools/secret"
)

// BenchmarkHostTurnBurst is the host's whole turn for a 20,000-delta answer
// (a newline every 16th delta) read from memory: the session, the provider,
// the conversation log, the UI's surfaces and the flusher, with each batch
// msgpack-encoded as ExecLua sends it. What is left out is the socket to
// Neovim and the HTTP connection; cmd/renderbench measures the real host.
// It reports the process's CPU time and allocations per turn.
func BenchmarkHostTurnBurst(b *testing.B) {
	const deltas = 20000
	r := llmtest.Reply()
	for i := range deltas {
		if i%16 == 15 {
			r.Content("word\n")
		} else {
			r.Content("word ")
		}
	}
	body := r.Usage(100, deltas, 0, 0.001).Finish("stop").Render(1, "bench/model")
	p := openrouter.New(openrouter.Config{BaseURL: "http://mem/api/v1", APIKey: "bench", HTTPClient: &http.Client{Transport: llmtest.Memory(body)}})

	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	send := func(_ context.Context, batch *Batch) error {
		buf.Reset()
		return enc.Encode([]any{`return require("fido.bridge").apply(...)`, []any{batch}})
	}
	dir := b.TempDir()
	var cpu time.Duration
	var allocs uint64
	for b.Loop() {
		// A fresh session and screen each round, as in a new Neovim: the
		// turn is the conversation's first, its transcript starts empty.
		b.StopTimer()
		u := newUI(send, nil, nil)
		ctx, cancel := context.WithCancel(context.Background())
		go u.flusher.run(ctx)
		cs := conversation.NewStore(dir)
		cs.Scrub = secret.Redact
		s, err := agent.NewSession(agent.SessionConfig{Provider: p, Screen: u, Prompter: u, Editor: u, Model: "bench/model",
			SystemPrompt: func() string { return "You are a bench." }, Conversations: cs})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		c0, a0 := processCPU(), heapObjects()
		s.Submit("stream")
		s.Wait()
		cpu += processCPU() - c0
		allocs += heapObjects() - a0

		b.StopTimer()
		u.mu.Lock()
		got := u.transcript.Len()
		u.mu.Unlock()
		if got < deltas/16 {
			b.Fatalf("the transcript holds %d lines", got)
		}
		s.Close()
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1e6, "cpu-ms/turn")
	b.ReportMetric(float64(allocs)/float64(b.N), "allocs/turn")
}

// processCPU is the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapObjects is the number of heap allocations so far.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
