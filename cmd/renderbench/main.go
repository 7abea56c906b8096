// Command renderbench measures what a user feels while Fido streams: a
// headless Neovim with the plugin and the real fido binary receives 20,000
// small deltas from the fake provider as fast as it can send them, while a
// second RPC client calls nvim_eval("1") in a loop. It reports that client's
// latency, the writes Fido made into Neovim, and the CPU time of Neovim and
// of the host, for the coalescing renderer and for a naive one that writes
// every delta at once. Then it repeats at a realistic pace (~190 deltas/s).
//
//	go run ./cmd/renderbench [-deltas 20000] [-rate 190] [-paced 10s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neovim/go-client/nvim"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

func main() {
	deltas := flag.Int("deltas", 20000, "deltas in the burst")
	rate := flag.Int("rate", 190, "deltas per second in the paced run")
	paced := flag.Duration("paced", 10*time.Second, "length of the paced run")
	flag.IntVar(&lineEvery, "line", 16, "a newline every this many deltas (0: one long line)")
	flag.Parse()
	if err := run(*deltas, *rate, *paced); err != nil {
		fmt.Fprintln(os.Stderr, "renderbench:", err)
		os.Exit(1)
	}
}

type result struct {
	name             string
	deltas           int
	wall             time.Duration
	lat              []time.Duration
	over16           time.Duration
	nOver16          int
	writes           int
	nvimCPU, hostCPU float64
	transcriptOK     bool
	applyMax         time.Duration
}

func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(p * float64(len(r.lat)-1))
	return r.lat[i]
}

func run(deltas, rate int, paced time.Duration) error {
	nvimBin, err := nvimtest.Find()
	if err != nil {
		return err
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fido-renderbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "fido")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fido")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/fido: %w", err)
	}
	pacedN := int(paced.Seconds() * float64(rate))
	var results []result
	for _, c := range []struct {
		name   string
		mode   string
		n      int
		period time.Duration
	}{
		{"burst, coalesced", "", deltas, 0},
		{"burst, naive", "naive", deltas, 0},
		{fmt.Sprintf("%d/s, coalesced", rate), "", pacedN, time.Second / time.Duration(rate)},
		{fmt.Sprintf("%d/s, naive", rate), "naive", pacedN, time.Second / time.Duration(rate)},
		// The probe alone, for as long as the paced run: what Neovim spends
		// without Fido streaming, subtracted to get Fido's own share.
		{"baseline (probe only)", "", 0, paced},
	} {
		fmt.Fprintf(os.Stderr, "renderbench: %s (%d deltas)…\n", c.name, c.n)
		r, err := measure(nvimBin, root, bin, filepath.Join(tmp, strconv.Itoa(len(results))), c.mode, c.n, c.period)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		r.name = c.name
		results = append(results, r)
	}
	print(results)
	return nil
}

func print(rs []result) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\tdeltas\twall\teval p50\tp99\tmax\twaits>16ms\ttime in them\twrites/s\tnvim CPU\thost CPU\tnvim share\tapply max\tok\t")
	for _, r := range rs {
		secs := r.wall.Seconds()
		fmt.Fprintf(w, "%s\t%d\t%.2fs\t%s\t%s\t%s\t%d\t%s\t%.0f\t%.2fs\t%.2fs\t%.1f%%\t%s\t%v\t\n",
			r.name, r.deltas, secs, ms(r.pct(0.5)), ms(r.pct(0.99)), ms(r.pct(1)), r.nOver16, ms(r.over16),
			float64(r.writes)/secs, r.nvimCPU, r.hostCPU, 100*r.nvimCPU/secs, ms(r.applyMax), r.transcriptOK)
	}
	w.Flush()
	fmt.Println("\ngoal: max ≤ 10 ms, nothing over 16 ms, ≤ 40 writes/s, Neovim + host ≤ 0.3 s CPU for the burst, ≤ 5 % of a core at 190 deltas/s")
	if len(rs) >= 2 {
		c, n := rs[0], rs[1]
		fmt.Printf("burst naive/coalesced: max latency ×%.1f, writes ×%.0f, Neovim CPU ×%.1f\n",
			ratio(n.pct(1).Seconds(), c.pct(1).Seconds()), ratio(float64(n.writes), float64(c.writes)), ratio(n.nvimCPU, c.nvimCPU))
	}
	if len(rs) >= 5 {
		share := func(r result) float64 { return 100 * r.nvimCPU / r.wall.Seconds() }
		base := share(rs[4])
		fmt.Printf("Neovim CPU share from Fido at the paced rate (minus the probe-only baseline of %.1f%%): coalesced %.1f%%, naive %.1f%%\n",
			base, share(rs[2])-base, share(rs[3])-base)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// script streams n deltas ("word " pieces, a newline every 16th), paced.
var lineEvery = 16

func script(n int, period time.Duration) *llmtest.ReplyBuilder {
	r := llmtest.Reply()
	if period > 0 {
		r.Pace(period)
	}
	for i := 0; i < n; i++ {
		if lineEvery > 0 && i%lineEvery == lineEvery-1 {
			r.Content("word\n")
		} else {
			r.Content("word ")
		}
	}
	return r.Usage(100, n, 0, 0.001).Finish("stop")
}

func measure(nvimBin, root, bin, tmp, mode string, n int, period time.Duration) (result, error) {
	res := result{deltas: n}
	if err := os.MkdirAll(filepath.Join(tmp, "ws"), 0o755); err != nil {
		return res, err
	}
	srv := llmtest.NewServer(nil)
	defer srv.Close()
	idle := time.Duration(0)
	if n == 0 {
		idle = period // baseline: no turn at all, just the probe for this long
	} else {
		srv.Enqueue(script(n, period))
	}

	env := append(nvimtest.Env(tmp), "FIDO_BINARY="+bin, "FIDO_BASE_URL="+srv.URL(),
		"OPENROUTER_API_KEY=bench", "FIDO_MODEL=bench/model")
	if mode != "" {
		env = append(env, "FIDO_RENDER="+mode)
	}
	sock := filepath.Join(tmp, "nvim.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(nvimBin),
		nvim.ChildProcessArgs(append(nvimtest.Args(root), "--listen", sock)...),
		nvim.ChildProcessEnv(env),
		nvim.ChildProcessDir(filepath.Join(tmp, "ws")),
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
	probe, err := nvim.Dial(sock, nvim.DialLogf(func(string, ...any) {}))
	if err != nil {
		return res, err
	}
	defer probe.Close()

	var flushes0 int
	if err := v.ExecLua(`return require("fido").status().flushes`, &flushes0); err != nil {
		return res, err
	}
	// Time every batch Neovim applies (the host calls bridge.apply by name).
	if err := v.ExecLua(`local b = require("fido.bridge")
local apply = b.apply
_G.renderbench_apply_max = 0
b.apply = function(batch)
  local t = vim.loop.hrtime()
  apply(batch)
  _G.renderbench_apply_max = math.max(_G.renderbench_apply_max, vim.loop.hrtime() - t)
end`, nil); err != nil {
		return res, err
	}
	nvim0, host0 := cpu(nvimPid), cpu(hostPid)
	start := time.Now()
	done := make(chan error, 1)
	if idle > 0 {
		go func() {
			time.Sleep(idle)
			done <- nil
		}()
	} else {
		if err := v.ExecLua(`require("fido").submit("stream")`, nil); err != nil {
			return res, err
		}
		go func() {
			done <- poll(v, `require("fido").status().usage.calls == 1 and require("fido").status().state == "idle"`,
				time.Duration(n)*50*time.Millisecond+30*time.Second)
		}()
	}
	for {
		select {
		case err := <-done:
			res.wall = time.Since(start)
			res.nvimCPU, res.hostCPU = cpu(nvimPid)-nvim0, cpu(hostPid)-host0
			if err != nil {
				return res, err
			}
			var flushes int
			if err := v.ExecLua(`return require("fido").status().flushes`, &flushes); err != nil {
				return res, err
			}
			res.writes = flushes - flushes0
			var applyMax int64
			if err := v.ExecLua(`return _G.renderbench_apply_max`, &applyMax); err != nil {
				return res, err
			}
			res.applyMax = time.Duration(applyMax)
			var last []string
			if err := v.ExecLua(`local b = vim.fn.bufnr("fido://transcript")
return vim.api.nvim_buf_get_lines(b, -3, -1, false)`, &last); err != nil {
				return res, err
			}
			// The answer's last line is complete: the pieces after the last newline.
			tail := n
			if lineEvery > 0 {
				tail = n % lineEvery
			}
			want := strings.TrimSpace(strings.Repeat("word ", tail))
			// The answer's last line, before the turn's cost line.
			res.transcriptOK = idle > 0
			for _, l := range last {
				if strings.TrimSpace(l) == want {
					res.transcriptOK = true
				}
			}
			sort.Slice(res.lat, func(i, j int) bool { return res.lat[i] < res.lat[j] })
			return res, nil
		default:
		}
		t0 := time.Now()
		var one int
		if err := probe.Eval("1", &one); err != nil {
			return res, err
		}
		d := time.Since(t0)
		res.lat = append(res.lat, d)
		if d > 16*time.Millisecond {
			res.nOver16++
			res.over16 += d
		}
		time.Sleep(time.Millisecond)
	}
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

// cpu is a process's user+system CPU seconds from /proc/<pid>/stat.
func cpu(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	// Fields after the command (which may hold spaces) start after ") ".
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above %s", dir)
		}
		dir = parent
	}
}
