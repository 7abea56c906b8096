// Command renderbench measures what streaming costs: a headless Neovim with
// the plugin, its sidebar and the real fido binary receives 20,000 small
// deltas from the fake provider as fast as it can send them, while a second
// RPC client calls nvim_eval("1") in a loop; then 100,000 (about 700 KB);
// then ~190 deltas/s for 10 s; then one 100,000-delta answer on a single
// line. It reports that client's latency, the writes into Neovim (the
// largest batch and Lua's time applying it), Neovim's CPU and memory, and
// the host's CPU beside a floor: a process that only reads the same bytes
// from a fake server of its own, splits the SSE events and parses each
// chunk with gjson. A naive renderer (this bench's reader process writing
// every delta into the transcript at once) shows what coalescing saves.
// -only sizes instead measures Lua's apply time by batch size, what the
// bound on a batch (nvim.DefaultLimit) is chosen from.
//
//	go run ./cmd/renderbench [-fido bin/fido] [-repeat 3] [-only burst,paced|sizes] [-deltas 20000] [-big 100000] [-rate 190] [-paced 10s] [-tls] [-cpuprofile /tmp/fido.prof]
package main

import (
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

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == readerArg {
		os.Exit(readerMain(os.Args[2:]))
	}
	deltas := flag.Int("deltas", 20000, "deltas in the burst")
	bigDeltas := flag.Int("big", 100000, "deltas in the big burst and in the one-line answer")
	rate := flag.Int("rate", 190, "deltas per second in the paced run")
	paced := flag.Duration("paced", 10*time.Second, "length of the paced run")
	line := flag.Int("line", 16, "a newline every this many deltas (0: one long line)")
	only := flag.String("only", "", "comma-separated runs to do (burst, burst100k, paced, oneline, naive-burst, naive-paced, baseline; or sizes alone: the apply cost by batch size); default all but sizes")
	repeat := flag.Int("repeat", 1, "do the burst and the paced run this many times (medians beside the floor)")
	flag.BoolVar(&writeEach, "write-each", false, "the burst's server writes every delta on its own (noisy: see writeEach)")
	bin := flag.String("fido", "", "the fido binary to measure (default: go build ./cmd/fido)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of each host run to PREFIX.<run>.<pid> (FIDO_CPUPROFILE)")
	useTLS := flag.Bool("tls", false, "the fake servers speak TLS and HTTP/2, as OpenRouter does (default: plain HTTP/1.1)")
	flag.Parse()
	o := options{deltas: *deltas, bigDeltas: *bigDeltas, rate: *rate, paced: *paced, line: *line, profile: *profile, bin: *bin, repeat: max(*repeat, 1), only: map[string]bool{}, tls: *useTLS}
	for _, k := range strings.Split(*only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			o.only[k] = true
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "renderbench:", err)
		os.Exit(1)
	}
}

type options struct {
	deltas, bigDeltas int
	rate, line        int
	repeat            int
	paced             time.Duration
	profile, bin      string
	only              map[string]bool
	tls               bool
}

func (o options) want(key string) bool { return len(o.only) == 0 || o.only[key] }

func run(o options) error {
	var e env
	var err error
	if e.nvimBin, err = nvimtest.Find(); err != nil {
		return err
	}
	if e.root, err = repoRoot(); err != nil {
		return err
	}
	if e.self, err = os.Executable(); err != nil {
		return err
	}
	if e.tmp, err = os.MkdirTemp("", "fido-renderbench-"); err != nil {
		return err
	}
	defer os.RemoveAll(e.tmp)
	e.profile, e.tls = o.profile, o.tls
	if e.bin, err = filepath.Abs(o.bin); o.bin == "" || err != nil {
		e.bin = filepath.Join(e.tmp, "fido")
		build := exec.Command("go", "build", "-o", e.bin, "./cmd/fido")
		build.Dir, build.Stdout, build.Stderr = e.root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/fido: %w", err)
		}
	}

	if o.only["sizes"] { // on its own: it picks the bound the runs below are held to
		return sizes(e)
	}

	period := time.Second / time.Duration(o.rate)
	pacedN := int(o.paced.Seconds() * float64(o.rate))
	specs := []runSpec{
		{key: "burst", name: "burst", renderer: fido, deltas: o.deltas, lineEvery: o.line, floor: true},
		{key: "paced", name: fmt.Sprintf("%d/s", o.rate), renderer: fido, deltas: pacedN, period: period, lineEvery: o.line, floor: true},
		{key: "burst100k", name: "burst", renderer: fido, deltas: o.bigDeltas, lineEvery: o.line},
		{key: "oneline", name: "burst, one line", renderer: fido, deltas: o.bigDeltas},
		{key: "naive-burst", name: "burst, naive", renderer: naive, deltas: o.deltas, lineEvery: o.line},
		{key: "naive-paced", name: fmt.Sprintf("%d/s, naive", o.rate), renderer: naive, deltas: pacedN, period: period, lineEvery: o.line},
		// The probe alone, for as long as the paced run: what Neovim spends
		// without anything streaming.
		{key: "baseline", name: "probe only", renderer: probe, idle: o.paced},
	}
	var rs []result
	for _, s := range specs {
		if !o.want(s.key) {
			continue
		}
		n := 1
		if s.floor {
			n = o.repeat
		}
		for i := 0; i < n; i++ {
			fmt.Fprintf(os.Stderr, "renderbench: %s (%d deltas)…\n", s.name, s.deltas)
			r, err := measure(e, s, filepath.Join(e.tmp, strconv.Itoa(len(rs))))
			if err == nil && s.floor && s.period == 0 {
				r.quietFloor, err = floor(e, s.deltas, s.lineEvery, 0)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			rs = append(rs, r)
		}
	}
	report(rs, o)
	return nil
}

func report(rs []result, o options) {
	if o.tls {
		fmt.Println("Every stream over TLS and HTTP/2 (-tls), as from OpenRouter.")
	}
	fmt.Println("Neovim while streaming (a second client's nvim_eval latency, writes into Neovim, Neovim's CPU and memory)")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\tdeltas\twall\teval p50\tp99\tmax\twaits>16ms\twrites\twrites/s\tnvim CPU\tnvim RSS\tlargest batch\tits apply\tapply max\thost CPU\tok\t")
	for _, r := range rs {
		secs := r.wall.Seconds()
		fmt.Fprintf(w, "%s\t%d\t%.2fs\t%s\t%s\t%s\t%d, %.3fs\t%d\t%.0f\t%s\t%s MB\t%d B, %d lines\t%s\t%s\t%s\t%v\t\n",
			r.name, r.deltas, secs, ms(r.pct(0.5)), ms(r.pct(0.99)), ms(r.pct(1)), r.nOver16, r.over16.Seconds(),
			r.writes, r.writesPerSec, cpuFig(r.nvimCPU, r.wall, r.period > 0 || r.renderer == probe), mb(r.nvimRSS),
			max(r.bigBytes, 0), r.bigLines, ms(r.bigApply), ms(r.applyMax), cpuFig(r.hostCPU, r.wall, r.period > 0), r.transcriptOK)
	}
	w.Flush()
	fmt.Println("writes/s: the most batches in any one second of the run. largest batch: its transcript part, and Lua's time applying it.")
	fmt.Println("goal: p99 ≤ 10 ms, ≤ 0.02 s in waits over 16 ms, ≤ 40 writes/s; Neovim's RSS after the one-line answer < 50 MB")
	for _, r := range rs {
		if r.renderer != fido {
			continue
		}
		var miss []string
		if r.pct(0.99) > 10*time.Millisecond {
			miss = append(miss, "p99 latency "+ms(r.pct(0.99)))
		}
		if r.over16 > 20*time.Millisecond {
			miss = append(miss, fmt.Sprintf("%.3f s in %d waits over 16 ms", r.over16.Seconds(), r.nOver16))
		}
		if r.writesPerSec > 40 {
			miss = append(miss, fmt.Sprintf("%.0f writes/s", r.writesPerSec))
		}
		if r.key == "oneline" && r.nvimRSS >= 50<<20 {
			miss = append(miss, "RSS "+mb(r.nvimRSS)+" MB")
		}
		if !r.transcriptOK {
			miss = append(miss, "transcript incomplete")
		}
		if len(miss) > 0 {
			fmt.Printf("  MISSED (%s, %d deltas): %s\n", r.name, r.deltas, strings.Join(miss, ", "))
		}
	}

	fmt.Println("\nHost CPU beside the floor (a process that only reads the same stream from a server of its own,")
	fmt.Println("splits the SSE events and parses each chunk with gjson: alongside the paced run; for a burst just before")
	fmt.Println("the host's, in the same Neovim under the same probe, and again once Neovim is closed: quiet floor)")
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\thost\tfloor\thost/floor\tquiet floor\tgoal\tmet\t")
	for _, key := range []string{"burst", "paced"} {
		var hosts, floors, ratios, quiets []float64
		var last result
		for _, r := range rs {
			if r.key != key || !r.floor.ok() {
				continue
			}
			paced := r.period > 0
			h, f := r.hostCPU.Seconds(), r.floor.CPU.Seconds()
			if paced {
				h, f = share(r.hostCPU, r.wall), share(r.floor.CPU, r.floor.Wall)
			}
			hosts, floors, ratios = append(hosts, h), append(floors, f), append(ratios, h/f)
			quiet := ""
			if r.quietFloor.ok() {
				quiets = append(quiets, r.quietFloor.CPU.Seconds())
				quiet = figure(r.quietFloor.CPU.Seconds(), paced)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%.1f×\t%s\t\t\t\n", r.name, figure(h, paced), figure(f, paced), h/f, quiet)
			last = r
		}
		if len(hosts) == 0 {
			continue
		}
		paced := key == "paced"
		h, f, ratio := median(hosts), median(floors), median(ratios)
		goal, met := "≤ 0.05 s, ≤ 2× the floor", h <= 0.05 && ratio <= 2
		if paced {
			goal, met = "≤ 0.5 % of a core, ≤ 2× the floor", h <= 0.005 && ratio <= 2
		}
		name := last.name
		if len(hosts) > 1 {
			name = fmt.Sprintf("%s, median of %d", name, len(hosts))
		}
		quiet := ""
		if len(quiets) > 0 {
			quiet = figure(median(quiets), paced)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.1f×\t%s\t%s\t%v\t\n", name, figure(h, paced), figure(f, paced), ratio, quiet, goal, met)
	}
	w.Flush()
}

func (r readerResult) ok() bool { return r.Deltas > 0 }

// figure shows CPU seconds, or (paced) a share of one core.
func figure(v float64, paced bool) string {
	if paced {
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	return fmt.Sprintf("%.3fs", v)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuFig shows CPU time, or (paced) the share of one core over wall.
func cpuFig(cpu, wall time.Duration, paced bool) string {
	if paced {
		return fmt.Sprintf("%.2f%%", 100*share(cpu, wall))
	}
	return fmt.Sprintf("%.3fs", cpu.Seconds())
}

func share(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

func mb(n int64) string { return fmt.Sprintf("%.0f", float64(n)/(1<<20)) }

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
