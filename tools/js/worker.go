package js

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"

	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

// The snippet runs in a child process of the host, the JavaScript worker
// (`fido js-worker`), so that nothing a snippet does — a 64 GiB ArrayBuffer,
// a runaway String.prototype.repeat, a native call that ignores interrupts —
// can take the host and its conversation down. The worker limits its own
// memory at the OS level before it reads any code (jsLimitMemory), and the
// host kills it when it outlives the time limit or the call is cancelled.
//
// Protocol (JSON lines): the host writes one jsWorkerRequest to the worker's
// stdin and keeps stdin open (EOF means the host is gone: the worker exits).
// The worker writes jsWorkerMsg lines to stdout: each console line as it is
// kept, then one message with the finished output, and exits. Before the
// request it says {"ready":true} once it has warmed up.

// WorkerCommand is the host subcommand that runs the worker.
const WorkerCommand = "js-worker"

type jsWorkerRequest struct {
	Code       string `json:"code"`
	TimeoutMS  int64  `json:"timeout_ms"`
	Network    bool   `json:"network"`
	OfflineWhy string `json:"offline_why"`
	Root       string `json:"root"`
	MemLimit   uint64 `json:"mem_limit"`
}

type jsWorkerMsg struct {
	Ready   bool           `json:"ready,omitempty"`
	Console *jsConsoleLine `json:"console,omitempty"`
	Done    *jsWorkerDone  `json:"done,omitempty"`
}

type jsWorkerDone struct {
	Output    jsOutput `json:"output"`
	ElapsedNS int64    `json:"elapsed_ns"`
	Killed    bool     `json:"killed,omitempty"`
}

// jsEngine runs snippets in this process: what the worker uses.
type jsEngine struct {
	ws        *workspace.Workspace
	client    *http.Client
	memLimit  uint64
	onConsole func(jsConsoleLine)
}

func newJSClient() *http.Client {
	return &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("stopped after 10 redirects")
		}
		return nil
	}}
}

// RunWorker is the worker's main: it reads one request from in, runs it
// and writes the messages to out. It returns the process exit code.
func RunWorker(in io.Reader, out io.Writer) int {
	// The JS regexp engine (regexp2) has no match timeout by default, and
	// goja's Interrupt does not reach into a running match. The setting is
	// process-wide: only this process, which runs nothing but the snippet,
	// gets it, before the warm-up compiles the first pattern.
	regexp2.DefaultMatchTimeout = jsRegexTimeout
	// A spare worker waits for its request: meanwhile it pages in and warms
	// up the interpreter, so the call itself does not pay for that.
	jsWarmUp()
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	send := func(m jsWorkerMsg) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m)
	}
	send(jsWorkerMsg{Ready: true})
	br := bufio.NewReaderSize(in, 64<<10)
	line, err := br.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		fmt.Fprintln(os.Stderr, "js-worker: no request:", err)
		return 2
	}
	var req jsWorkerRequest
	if err := json.Unmarshal(line, &req); err != nil {
		fmt.Fprintln(os.Stderr, "js-worker: bad request:", err)
		return 2
	}
	if req.MemLimit == 0 {
		req.MemLimit = jsMemoryLimit
	}
	// Before any snippet code runs: the OS refuses the worker more memory
	// than this, so an allocation too large for the heap check to see ends
	// the worker (and only the worker) with an out-of-memory error.
	ceiling := jsWorkerMemoryCeiling(req.MemLimit)
	if err := jsLimitMemory(ceiling); err != nil {
		fmt.Fprintln(os.Stderr, "js-worker: cannot limit memory:", err)
		return 2
	}
	// Garbage is collected harder well before the ceiling (but not near the
	// heap check's limit, where collecting live data would only slow it).
	debug.SetMemoryLimit(int64(ceiling / 4 * 3))
	// The host is gone when stdin ends: nobody would read the result.
	go func() {
		_, _ = io.Copy(io.Discard, br)
		os.Exit(3)
	}()

	ws, err := workspace.New(req.Root, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "js-worker:", err)
		return 2
	}
	e := &jsEngine{ws: ws, client: newJSClient(), memLimit: req.MemLimit,
		onConsole: func(l jsConsoleLine) { send(jsWorkerMsg{Console: &l}) }}
	res, elapsed, killed := e.run(context.Background(), req.Code, time.Duration(req.TimeoutMS)*time.Millisecond, req.Network, req.OfflineWhy)
	send(jsWorkerMsg{Done: &jsWorkerDone{Output: res, ElapsedNS: int64(elapsed), Killed: killed}})
	return 0
}

func jsWarmUp() {
	vm := goja.New()
	_, _ = vm.RunString(`JSON.stringify([1, "a", {b: 2}].map(x => x))`)
}

// jsWorkerMemoryCeiling is the OS limit for a worker whose heap may grow by
// limit: room for the garbage collector's lag and the runtime itself.
func jsWorkerMemoryCeiling(limit uint64) uint64 {
	if jsRaceBuild {
		return 8*limit + 1<<30
	}
	return 2*limit + 256<<20
}

// run executes code under the watchdog: time limit, cancellation and heap
// growth. killed reports that the runtime did not stop when interrupted (the
// worker exits right after, which ends it).
func (t *jsEngine) run(ctx context.Context, code string, timeout time.Duration, network bool, offlineWhy string) (out jsOutput, elapsed time.Duration, killed bool) {
	start := time.Now()
	// Requests get the run's time limit; the extra grace lets the watchdog,
	// not a racing request error, report the timeout.
	runCtx, cancel := context.WithTimeout(ctx, timeout+jsKillGrace)
	defer cancel() // also aborts fetches still in flight
	run := newJSRun(t, runCtx, network, offlineWhy)
	done := make(chan jsOutcome, 1)
	go run.execute(code, done)

	var stop jsStop
	var res jsOutcome
	finished := false
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	memTick := time.NewTicker(jsMemoryPoll)
	defer memTick.Stop()
	for !finished && stop == 0 {
		select {
		case res = <-done:
			finished = true
		case <-timer.C:
			stop = jsStopTimeout
		case <-ctx.Done():
			stop = jsStopCancel
		case <-memTick.C:
			if run.heapGrowth(0) > t.memLimit {
				stop = jsStopMemory
			}
		}
	}
	if !finished {
		run.halt(stop)
		cancel()
		select {
		case res = <-done:
		case <-time.After(jsKillGrace):
			killed = true
		}
	}
	elapsed = time.Since(start)
	run.stopTimers()
	out.Console, out.ConsoleDropped = run.console.snapshot()
	if !killed && !res.stopped {
		stop = 0 // it finished on its own before the interrupt took effect
	}
	switch {
	case stop == jsStopTimeout:
		out.TimedOut = true
		msg := fmt.Sprintf("timed out after %s", text.Duration(timeout))
		if killed {
			msg = fmt.Sprintf("killed after timeout (%s): the runtime did not stop within %s of being interrupted, probably inside a long native call such as a regexp match", text.Duration(timeout), jsKillGrace)
		}
		out.Error = &jsError{Name: "TimeoutError", Message: msg, Stack: res.stack}
	case stop == jsStopMemory:
		out.Error = &jsError{Name: "RangeError", Message: fmt.Sprintf("stopped: the heap grew by more than %d MiB", t.memLimit>>20)}
		if killed {
			out.Error.Message += " (killed: the runtime did not stop after being interrupted)"
		}
	case stop == jsStopCancel:
		out.Error = &jsError{Name: "Error", Message: "cancelled"}
	default:
		out.Result, out.ResultString, out.ResultNote, out.Error = res.result, res.resultString, res.resultNote, res.err
	}
	return out, elapsed, killed
}

// jsHeapBytes is the process's heap in use by objects (live and not yet swept).
func jsHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
