package js

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/fido-nvim/fido/tools/secret"
	"github.com/fido-nvim/fido/tools/text"
)

// jsWorkerSlack is how long after the worker's own deadline (the time limit
// plus jsKillGrace) the host waits before it kills the worker.
const jsWorkerSlack = time.Second

// jsWorkerSpec says how to start the worker; the zero value is this
// executable with the js-worker subcommand.
type jsWorkerSpec struct {
	path string
	args []string
	env  []string // added to the environment (tests)
}

func (w jsWorkerSpec) command() (*exec.Cmd, error) {
	path, args := w.path, w.args
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("cannot find the fido executable to start the JavaScript worker: %w", err)
		}
		path, args = exe, []string{WorkerCommand}
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(secret.ScrubbedEnv(os.Environ()), w.env...)
	cmd.SysProcAttr = jsWorkerProcAttr()
	return cmd, nil
}

// jsCapture keeps the first max bytes written (the worker's stderr: a Go
// crash starts with its reason, then the goroutine dump).
type jsCapture struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (c *jsCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *jsCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// jsWorkerProc is a started worker waiting for its request.
type jsWorkerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *jsCapture
	exited chan struct{} // closed when the worker has exited and its output is read
	result chan struct{} // closed when the result arrived
	ready  chan struct{} // closed when the worker said it is warmed up
	err    error         // Wait's error, set before exited closes

	mu      sync.Mutex
	console []jsConsoleLine
	done    *jsWorkerDone
}

// startWorker starts a worker process; it waits for a request on stdin.
func (w jsWorkerSpec) start(dir string) (*jsWorkerProc, error) {
	cmd, err := w.command()
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	p := &jsWorkerProc{cmd: cmd, stderr: &jsCapture{max: 4 << 10}, exited: make(chan struct{}), result: make(chan struct{}), ready: make(chan struct{})}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the JavaScript worker: %w", err)
	}
	go func() {
		br := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m jsWorkerMsg
				if json.Unmarshal(line, &m) == nil {
					p.mu.Lock()
					if m.Console != nil {
						p.console = append(p.console, *m.Console)
					}
					if m.Ready {
						close(p.ready)
					}
					if m.Done != nil && p.done == nil {
						p.done = m.Done
						close(p.result)
					}
					p.mu.Unlock()
				}
			}
			if err != nil {
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *jsWorkerProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill ends the worker and waits for it.
func (p *jsWorkerProc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.stdin.Close()
	<-p.exited
}

// jsSpare is a worker being started ahead of the call that will use it.
type jsSpare struct {
	ready chan struct{} // closed when p and err are set
	p     *jsWorkerProc
	err   error
}

func (s *jsSpare) wait() (*jsWorkerProc, error) {
	<-s.ready
	return s.p, s.err
}

// takeWorker hands out the spare worker started after the previous call (its
// start-up, ~10-60 ms of process and runtime initialization, then happens
// while the model thinks, not during the call), or starts one, and starts
// the next spare.
func (t *JSTool) takeWorker() (*jsWorkerProc, error) {
	t.spareMu.Lock()
	spare := t.spare
	t.spare = nil
	t.spareMu.Unlock()
	defer t.Prewarm()
	if spare != nil {
		if p, err := spare.wait(); err == nil && p.alive() {
			return p, nil
		} else if p != nil {
			p.kill()
		}
	}
	return t.worker.start(t.ws.Root)
}

// Prewarm starts a spare worker in the background unless one exists, so the
// next call does not wait for a process to start.
func (t *JSTool) Prewarm() {
	t.spareMu.Lock()
	defer t.spareMu.Unlock()
	if t.closed || t.spare != nil {
		return
	}
	s := &jsSpare{ready: make(chan struct{})}
	t.spare = s
	go func() {
		s.p, s.err = t.worker.start(t.ws.Root)
		close(s.ready)
	}()
}

// spareReady waits until the spare worker (if any) is warmed up (tests).
func (t *JSTool) spareReady() {
	t.spareMu.Lock()
	spare := t.spare
	t.spareMu.Unlock()
	if spare == nil {
		return
	}
	if p, _ := spare.wait(); p != nil {
		select {
		case <-p.ready:
		case <-p.exited:
		case <-time.After(20 * time.Second):
		}
	}
}

// Close ends the spare worker (the host's exit ends it anyway: its stdin
// closes and, on Linux, the parent-death signal kills it).
func (t *JSTool) Close() {
	t.spareMu.Lock()
	t.closed = true
	spare := t.spare
	t.spare = nil
	t.spareMu.Unlock()
	if spare != nil {
		if p, _ := spare.wait(); p != nil {
			p.kill()
		}
	}
}

// runWorker runs one snippet in a worker process and returns its output.
// The error is for failures to run at all and for cancellation.
func (t *JSTool) runWorker(ctx context.Context, code string, timeout time.Duration, network bool, offlineWhy string) (jsOutput, time.Duration, error) {
	var out jsOutput
	req, err := json.Marshal(jsWorkerRequest{
		Code: code, TimeoutMS: timeout.Milliseconds(), Network: network, OfflineWhy: offlineWhy,
		Root: t.ws.Root, MemLimit: t.memLimit,
	})
	if err != nil {
		return out, 0, err
	}
	start := time.Now()
	p, err := t.takeWorker()
	if err != nil {
		return out, 0, err
	}
	// stdin stays open until the call ends: its EOF tells the worker the
	// host is gone.
	defer p.stdin.Close()
	go func() { _, _ = p.stdin.Write(append(req, '\n')) }()

	hard := time.NewTimer(timeout + jsKillGrace + jsWorkerSlack)
	defer hard.Stop()
	hostKilled := false
	select {
	case <-p.result: // the worker exits by itself right after
	case <-p.exited:
	case <-hard.C:
		p.kill()
		hostKilled = true
	case <-ctx.Done():
		p.kill()
		return out, time.Since(start), ctx.Err()
	}
	elapsed := time.Since(start)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		// The snippet's own run time: what the transcript line reports.
		return p.done.Output, time.Duration(p.done.ElapsedNS), nil
	}
	// The worker ended without a result: killed by the host, or it crashed
	// (an allocation over its memory limit ends it with a fatal error).
	out.Console = p.console
	crash := strings.TrimSpace(p.stderr.String())
	switch {
	case hostKilled:
		out.TimedOut = true
		out.Error = &jsError{Name: "TimeoutError", Message: fmt.Sprintf("killed after timeout (%s): the JavaScript worker did not stop when interrupted and was killed", text.Duration(timeout))}
	case jsOutOfMemory(crash):
		out.Error = &jsError{Name: "RangeError", Message: fmt.Sprintf("out of memory: the snippet asked for more memory than javascript_execute allows (about %d MiB); its worker process was stopped, nothing else was affected", jsWorkerMemoryCeiling(t.memLimit)>>20)}
	default:
		out.Error = &jsError{Name: "InternalError", Message: fmt.Sprintf("the JavaScript worker ended unexpectedly (%v)%s", jsExitText(p.err), jsCrashLine(crash))}
	}
	return out, elapsed, nil
}

// jsOutOfMemory recognizes the Go runtime's out-of-memory crash.
func jsOutOfMemory(stderr string) bool {
	return strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "failed to allocate") // the race detector's runtime
}

func jsExitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// jsCrashLine is the first line of the worker's last words, for the model.
func jsCrashLine(stderr string) string {
	if stderr == "" {
		return ""
	}
	first := stderr
	if i := bytes.IndexByte([]byte(stderr), '\n'); i >= 0 {
		first = stderr[:i]
	}
	return ": " + text.Shorten(first, 200)
}
