package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// renderer says who writes the stream into Neovim.
type renderer int

const (
	fido  renderer = iota // bin/fido, coalescing
	naive                 // this bench's reader process, a write per delta
	probe                 // nobody: the probe alone (the baseline)
)

// runSpec is one measured run.
type runSpec struct {
	key, name string
	renderer  renderer
	deltas    int
	period    time.Duration // between deltas (0: as fast as the server sends)
	lineEvery int           // a newline every this many deltas (0: one line)
	idle      time.Duration // probe: how long
	// floor: the floor reader reads the same script from a server of its
	// own, alongside the paced run (same machine load over the same
	// seconds) or, for a burst (which the two would disturb in each
	// other), just before the host's under the same probe; the burst's is
	// read again once Neovim is closed (quietFloor), to show the probe's
	// load does not change it.
	floor bool
}

// result is what a run measured.
type result struct {
	runSpec
	wall     time.Duration
	lat      []time.Duration // the probe's eval latencies, sorted
	over16   time.Duration
	nOver16  int
	writes   int
	nvimCPU  time.Duration
	hostCPU  time.Duration // bin/fido, or the naive renderer process
	nvimRSS  int64         // after the run
	applyMax time.Duration
	// The largest batch's transcript part (bytes, lines) and its apply time.
	bigBytes, bigLines int
	bigApply           time.Duration
	writesPerSec       float64 // the most batches in any second (see writesPerSecond)
	transcriptOK       bool
	floor              readerResult // when spec.floor
	quietFloor         readerResult // a burst's floor read again once Neovim is closed
}

func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[int(p*float64(len(r.lat)-1))]
}

// env is what every run shares.
type env struct {
	nvimBin, root, bin, self string
	tmp                      string
	profile                  string // FIDO_CPUPROFILE prefix for the host, "" for none
	tls                      bool   // the fake servers speak TLS and HTTP/2, as OpenRouter does
}

// server starts a fake endpoint for one run and returns it with the
// environment its clients need: over TLS, SSL_CERT_FILE naming its
// certificate (Go's clients, bin/fido's and the reader's, honour it).
func (e env) server(dir string) (*llmtest.Server, []string, error) {
	if !e.tls {
		return llmtest.NewServer(nil), nil, nil
	}
	srv := llmtest.NewTLSServer(nil)
	cert := filepath.Join(dir, fmt.Sprintf("cert-%p.pem", srv))
	if err := os.WriteFile(cert, srv.CertPEM(), 0o644); err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, []string{"SSL_CERT_FILE=" + cert}, nil
}

// writeEach makes a burst's server write (and flush) every delta on its
// own, as a paced stream does. Then the reader's cost depends on a race:
// ahead of the server it wakes up once per delta, behind it one read
// brings many; hosts and floor alike vary by 3-5× from run to run.
var writeEach bool

// script streams n deltas ("word " pieces, a newline every lineEvery),
// each written on its own every period; a burst (period 0) is written at
// once (see writeEach), the stream a fast upstream delivers in few reads.
func script(n, lineEvery int, period time.Duration) *llmtest.ReplyBuilder {
	piece := func(i int) string {
		if lineEvery > 0 && i%lineEvery == lineEvery-1 {
			return "word\n"
		}
		return "word "
	}
	r := llmtest.Reply()
	if period == 0 && !writeEach {
		// The chunks llmtest writes, in one write.
		env := `data: {"id":"gen-llmtest-1","provider":"llmtest","model":"bench/model","object":"chat.completion.chunk","created":` +
			strconv.Itoa(llmtest.Created) + `,"choices":`
		var b strings.Builder
		for i := 0; i < n; i++ {
			text, _ := json.Marshal(piece(i))
			b.WriteString(env + `[{"index":0,"delta":{"content":` + string(text) + `},"finish_reason":null,"native_finish_reason":null}]}` + "\n\n")
		}
		b.WriteString(env + `[],"usage":{"prompt_tokens":100,"completion_tokens":` + strconv.Itoa(n) + `,"total_tokens":` + strconv.Itoa(100+n) +
			`,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0},"cost":0.001}}` + "\n\n")
		b.WriteString(env + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop"}]}` + "\n\n")
		return r.Raw(b.String())
	}
	if period > 0 {
		r.Pace(period)
	}
	for i := 0; i < n; i++ {
		r.Content(piece(i))
	}
	return r.Usage(100, n, 0, 0.001).Finish("stop")
}

// measure runs one spec in a fresh headless Neovim with the plugin and its
// sidebar open, while a second RPC client calls nvim_eval("1") in a loop.
func measure(e env, spec runSpec, dir string) (result, error) {
	res := result{runSpec: spec}
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		return res, err
	}
	srv, srvEnv, err := e.server(dir)
	if err != nil {
		return res, err
	}
	defer srv.Close()
	if spec.deltas > 0 {
		srv.Enqueue(script(spec.deltas, spec.lineEvery, spec.period))
	}

	vars := append(nvimtest.Env(dir), "FIDO_BINARY="+e.bin, "FIDO_BASE_URL="+srv.URL(),
		"OPENROUTER_API_KEY=bench", "FIDO_MODEL=bench/model")
	vars = append(vars, srvEnv...)
	if e.profile != "" && spec.renderer == fido {
		vars = append(vars, "FIDO_CPUPROFILE="+e.profile+"."+spec.key)
	}
	sock := filepath.Join(dir, "nvim.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(e.nvimBin),
		nvim.ChildProcessArgs(append(nvimtest.Args(e.root), "--listen", sock)...),
		nvim.ChildProcessEnv(vars),
		nvim.ChildProcessDir(filepath.Join(dir, "ws")),
		nvim.ChildProcessContext(ctx),
		nvim.ChildProcessLogf(func(string, ...any) {}),
	)
	if err != nil {
		return res, err
	}
	defer v.Close()
	defer v.ExecLua(`require("fido.host").stop()`, nil)

	// A realistic screen: the sidebar is open, with a UI-sized editor.
	if err := v.ExecLua(`vim.o.columns = 200; vim.o.lines = 50; vim.cmd("Fido"); require("fido.host").ensure()`, nil); err != nil {
		return res, err
	}
	if err := poll(v, `require("fido.host").ready()`, 10*time.Second); err != nil {
		return res, err
	}
	var nvimPid, hostPid int
	if err := v.Eval("getpid()", &nvimPid); err != nil {
		return res, err
	}
	if err := v.ExecLua(`return require("fido.host").pid()`, &hostPid); err != nil {
		return res, err
	}
	probeClient, err := nvim.Dial(sock, nvim.DialLogf(func(string, ...any) {}))
	if err != nil {
		return res, err
	}
	defer probeClient.Close()

	var flushes0 int
	if err := v.ExecLua(`return require("fido").status().flushes`, &flushes0); err != nil {
		return res, err
	}
	// Time every batch Neovim applies (the host calls bridge.apply by name),
	// note when it came and keep the largest transcript part's size.
	if err := v.ExecLua(`local b = require("fido.bridge")
local apply = b.apply
_G.renderbench = { apply_max = 0, at = {}, big = { bytes = -1, lines = 0, ns = 0 } }
local rb = _G.renderbench
b.apply = function(batch)
  local t = vim.loop.hrtime()
  local resync = apply(batch)
  local d = vim.loop.hrtime() - t
  rb.apply_max = math.max(rb.apply_max, d)
  table.insert(rb.at, t)
  local tr = batch.transcript
  if type(tr) == "table" then
    local bytes, lines = 0, 0
    for _, l in ipairs(type(tr.lines) == "table" and tr.lines or {}) do
      bytes, lines = bytes + #l, lines + 1
    end
    for _, s in ipairs(type(tr.set) == "table" and tr.set or {}) do
      bytes, lines = bytes + #s.text, lines + 1
    end
    if type(tr.append) == "table" then
      bytes, lines = bytes + #tr.append.text, lines + 1
    end
    if bytes > rb.big.bytes or (bytes == rb.big.bytes and d > rb.big.ns) then
      rb.big = { bytes = bytes, lines = lines, ns = d }
    end
  end
  return resync
end`, nil); err != nil {
		return res, err
	}

	// The burst's floor reads its burst here, before the host's: Neovim,
	// the host and the probe as they are while the host streams, less
	// what the host itself makes Neovim do. (The paced run's floor reads
	// alongside the host's, below.)
	if spec.floor && spec.period == 0 {
		floorDone := make(chan error, 1)
		go func() {
			var err error
			res.floor, err = floor(e, spec.deltas, spec.lineEvery, 0)
			floorDone <- err
		}()
		if err := probeUntil(probeClient, floorDone, nil); err != nil {
			return res, fmt.Errorf("floor: %w", err)
		}
	}

	// The probe lives in this process, beside the fake server writing a
	// burst of up to 23 MB: this process's garbage collector, marking that
	// heap, delayed the probe's calls by up to 100 ms while Neovim's own
	// 1 ms timer saw no gap over 10 ms. It does not collect while measuring
	// (the run allocates a few copies of the script at most).
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	nvim0, host0 := cpuTime(nvimPid), cpuTime(hostPid)
	start := time.Now()
	done := make(chan error, 1)
	var naiveOut bytes.Buffer
	switch spec.renderer {
	case probe:
		go func() {
			time.Sleep(spec.idle)
			done <- nil
		}()
	case fido:
		floorDone := make(chan error, 1)
		if spec.floor && spec.period > 0 {
			go func() {
				var err error
				res.floor, err = floor(e, spec.deltas, spec.lineEvery, spec.period)
				floorDone <- err
			}()
		} else {
			floorDone <- nil
		}
		if err := v.ExecLua(`require("fido").submit("stream")`, nil); err != nil {
			return res, err
		}
		go func() {
			err := poll(v, `require("fido").status().usage.calls == 1 and require("fido").status().state == "idle"`,
				time.Duration(spec.deltas)*50*time.Millisecond+30*time.Second)
			if ferr := <-floorDone; err == nil && ferr != nil {
				err = fmt.Errorf("floor: %w", ferr)
			}
			done <- err
		}()
	case naive:
		cmd := exec.Command(e.self, readerArg, "-url", srv.URL()+"/chat/completions", "-sock", sock)
		cmd.Env = append(os.Environ(), srvEnv...)
		cmd.Stdout, cmd.Stderr = &naiveOut, os.Stderr
		if err := cmd.Start(); err != nil {
			return res, err
		}
		go func() { done <- cmd.Wait() }()
	}
	err = probeUntil(probeClient, done, &res)
	return finish(v, res, err, start, nvimPid, hostPid, nvim0, host0, flushes0, naiveOut.Bytes())
}

// probeUntil calls nvim_eval("1") in a loop, a millisecond apart, until
// done reports; it records each call's latency in res (when res is not nil)
// and returns what done reported.
func probeUntil(c *nvim.Nvim, done <-chan error, res *result) error {
	for {
		select {
		case err := <-done:
			return err
		default:
		}
		t0 := time.Now()
		var one int
		if err := c.Eval("1", &one); err != nil {
			return err
		}
		if d := time.Since(t0); res != nil {
			res.lat = append(res.lat, d)
			if d > 16*time.Millisecond {
				res.nOver16++
				res.over16 += d
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// finish collects a run's figures once its stream ended.
func finish(v *nvim.Nvim, res result, err error, start time.Time, nvimPid, hostPid int,
	nvim0, host0 time.Duration, flushes0 int, naiveOut []byte) (result, error) {
	res.wall = time.Since(start)
	res.nvimCPU, res.hostCPU = cpuTime(nvimPid)-nvim0, cpuTime(hostPid)-host0
	if err != nil {
		return res, err
	}
	if res.renderer == naive {
		var nr readerResult
		if err := json.Unmarshal(naiveOut, &nr); err != nil {
			return res, fmt.Errorf("naive renderer's result %q: %w", naiveOut, err)
		}
		res.hostCPU = nr.CPU
	}
	var flushes int
	if err := v.ExecLua(`return require("fido").status().flushes`, &flushes); err != nil {
		return res, err
	}
	res.writes = flushes - flushes0
	var rb struct {
		ApplyMax int64   `msgpack:"apply_max"`
		At       []int64 `msgpack:"at"`
		Big      struct {
			Bytes int   `msgpack:"bytes"`
			Lines int   `msgpack:"lines"`
			NS    int64 `msgpack:"ns"`
		} `msgpack:"big"`
	}
	if err := v.ExecLua(`return _G.renderbench`, &rb); err != nil {
		return res, err
	}
	res.applyMax = time.Duration(rb.ApplyMax)
	res.bigBytes, res.bigLines, res.bigApply = rb.Big.Bytes, rb.Big.Lines, time.Duration(rb.Big.NS)
	res.writesPerSec = writesPerSecond(rb.At)
	res.nvimRSS = rss(nvimPid)
	var last []string
	if err := v.ExecLua(`local b = vim.fn.bufnr("fido://transcript")
return vim.api.nvim_buf_get_lines(b, -3, -1, false)`, &last); err != nil {
		return res, err
	}
	// The answer's last line is complete: the pieces after the last newline.
	tail := res.deltas
	if res.lineEvery > 0 {
		tail = res.deltas % res.lineEvery
	}
	want := strings.TrimSpace(strings.Repeat("word ", tail))
	// The answer's last line, before the turn's cost line.
	res.transcriptOK = res.renderer == probe
	for _, l := range last {
		if strings.TrimSpace(l) == want {
			res.transcriptOK = true
		}
	}
	if res.renderer == fido && res.lineEvery == 0 {
		// One line longer than nvim.MaxRowBytes is shown in rows: joined,
		// the rows after the answer's header begin with the whole line.
		var rows []string
		if err := v.ExecLua(`local ls = vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)
local from = 1
for i, l in ipairs(ls) do if l == "## Fido" then from = i + 1 end end
return vim.list_slice(ls, from)`, &rows); err != nil {
			return res, err
		}
		res.transcriptOK = strings.HasPrefix(strings.Join(rows, ""), want)
	}
	sort.Slice(res.lat, func(i, j int) bool { return res.lat[i] < res.lat[j] })
	return res, nil
}

// floor runs the floor reader process against the same script and returns
// what it measured of itself.
func floor(e env, n, lineEvery int, period time.Duration) (readerResult, error) {
	srv, srvEnv, err := e.server(e.tmp)
	if err != nil {
		return readerResult{}, err
	}
	defer srv.Close()
	srv.Enqueue(script(n, lineEvery, period))
	var out bytes.Buffer
	cmd := exec.Command(e.self, readerArg, "-url", srv.URL()+"/chat/completions")
	cmd.Env = append(os.Environ(), srvEnv...)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return readerResult{}, err
	}
	var res readerResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return res, fmt.Errorf("floor's result %q: %w", out.Bytes(), err)
	}
	if res.Deltas != n {
		return res, fmt.Errorf("floor read %d deltas, want %d", res.Deltas, n)
	}
	return res, nil
}

func poll(v *nvim.Nvim, expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		if err := v.ExecLua("return ("+expr+") and true or false", &ok); err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timeout waiting for %s", expr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writesPerSecond is the most batches Neovim applied within any one second
// (at: their hrtime stamps, ns), counted from the first: over a run shorter
// than a second, every batch of it. A rate over the whole run would hide a
// burst of writes in an otherwise quiet run.
func writesPerSecond(at []int64) float64 {
	most := 0
	j := 0
	for i := range at {
		for at[i]-at[j] >= int64(time.Second) {
			j++
		}
		most = max(most, i-j+1)
	}
	return float64(most)
}
