package openrouter

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
)

const benchDeltas = 20000

// floorRead only splits the stream into lines and parses each data chunk
// with gjson: the least any reader of this stream must do.
func floorRead(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, sseBufferSize)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if p, ok := bytes.CutPrefix(line, dataField); ok {
			p = bytes.TrimSpace(p)
			if bytes.Equal(p, doneMarker) {
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

// readAll runs the provider's reader and accumulator over a stream, without
// HTTP; n counts the bytes of text handed on.
func readAll(body []byte) (agent.Response, int, error) {
	n := 0
	acc := newAccumulator(func(d agent.Delta) { n += len(d.Text) })
	events := newEventReader(&streamBody{r: bytes.NewReader(body), flush: acc.flush}, nil)
	for {
		payload, err := events.next()
		if err == io.EOF {
			acc.flush()
			return acc.response(""), n, nil
		}
		if err != nil {
			return agent.Response{}, n, err
		}
		if perr := acc.chunk(payload, events.errorEvent); perr != nil {
			return agent.Response{}, n, perr
		}
	}
}

// heapObjects is the number of heap allocations so far.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkStream20kDeltasInMemory streams 20,000 content deltas from memory
// three ways, one after the other in every round so that all three see the
// same machine load: the floor reader (split lines, gjson per chunk), the
// provider's reader with its accumulator, and the whole provider (Stream,
// HTTP answered from memory). It reports process CPU time and allocations
// per delta and the ratios to the floor (the goal is at most 2x). The
// order of the three turns from round to round, so that the garbage
// collection one phase leaves to the next is shared out evenly.
func BenchmarkStream20kDeltasInMemory(b *testing.B) {
	body := llmtest.Reply().ContentDeltas(benchDeltas, "tok ").Finish("stop").Usage(10, benchDeltas, 0, 0.01).Render(1, "test/model")
	p := New(Config{BaseURL: "http://mem/api/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: llmtest.Memory(body)}})
	want := 4 * benchDeltas
	phases := []struct {
		name string
		run  func() error
	}{
		{"floor", func() error {
			if n, err := floorRead(bytes.NewReader(body)); err != nil || n != want {
				return fmt.Errorf("floor: %d bytes, %v", n, err)
			}
			return nil
		}},
		{"reader", func() error {
			resp, n, err := readAll(body)
			if err != nil || n != want || len(resp.Message.Content) != want {
				return fmt.Errorf("reader: %d bytes, %v", n, err)
			}
			return nil
		}},
		{"provider", func() error {
			n := 0
			resp, err := p.Stream(context.Background(), agent.Request{Model: "test/model", Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}},
				func(d agent.Delta) { n += len(d.Text) })
			if err != nil || n != want || len(resp.Message.Content) != want {
				return fmt.Errorf("provider: %d bytes, %v", n, err)
			}
			return nil
		}},
	}
	cpu := make([]time.Duration, len(phases))
	allocs := make([]uint64, len(phases))
	rounds := 0
	for b.Loop() {
		rounds++
		for k := range phases {
			i := (rounds + k) % len(phases)
			ph := phases[i]
			c0, a0 := processCPU(), heapObjects()
			if err := ph.run(); err != nil {
				b.Fatal(err)
			}
			cpu[i] += processCPU() - c0
			allocs[i] += heapObjects() - a0
		}
	}
	n := float64(rounds) * benchDeltas
	var report strings.Builder
	fmt.Fprintf(&report, "%d deltas from memory, %d rounds, process CPU per delta:", benchDeltas, rounds)
	for i, ph := range phases {
		ns := float64(cpu[i].Nanoseconds()) / n
		b.ReportMetric(ns, ph.name+"-ns/delta")
		fmt.Fprintf(&report, "\n  %-8s %6.0f ns  %5.2f allocs", ph.name, ns, float64(allocs[i])/n)
		if i > 0 && cpu[0] > 0 {
			ratio := float64(cpu[i]) / float64(cpu[0])
			b.ReportMetric(ratio, ph.name+"-x-floor")
			fmt.Fprintf(&report, "  %.2fx the floor", ratio)
		}
	}
	b.Log(report.String())
}
