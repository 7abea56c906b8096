// Command renderbench measures what streaming costs: a headless Neovim with
// the plugin, its sidebar and the real fido binary receives 20,000 small
// deltas from the fake provider as fast as it can send them, while a second
// RPC client calls nvim_eval("1") in a loop; then ~190 deltas/s for 10 s;
// then one 20,000-delta answer on a single line. It reports that client's
// latency, the writes into Neovim, Neovim's CPU and memory, and the host's
// CPU beside a floor: a process that only reads the same bytes from the same
// fake server, splits the SSE events and parses each chunk with gjson. A
// naive renderer (this bench's reader process writing every delta into the
// transcript at once) shows what coalescing saves.
//
//	go run ./cmd/renderbench [-fido bin/fido] [-deltas 20000] [-rate 190] [-paced 10s] [-only burst,paced] [-cpuprofile /tmp/fido.prof]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	rate := flag.Int("rate", 190, "deltas per second in the paced run")
	paced := flag.Duration("paced", 10*time.Second, "length of the paced run")
	line := flag.Int("line", 16, "a newline every this many deltas (0: one long line)")
	only := flag.String("only", "", "comma-separated runs to do (burst, paced, oneline, naive-burst, naive-paced, baseline, floor); default all")
	bin := flag.String("fido", "", "the fido binary to measure (default: go build ./cmd/fido)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of each host run to PREFIX.<run>.<pid> (FIDO_CPUPROFILE)")
	flag.Parse()
	o := options{deltas: *deltas, rate: *rate, paced: *paced, line: *line, profile: *profile, bin: *bin, only: map[string]bool{}}
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
	deltas, rate, line int
	paced              time.Duration
	profile, bin       string
	only               map[string]bool
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
	e.profile = o.profile
	if e.bin, err = filepath.Abs(o.bin); o.bin == "" || err != nil {
		e.bin = filepath.Join(e.tmp, "fido")
		build := exec.Command("go", "build", "-o", e.bin, "./cmd/fido")
		build.Dir, build.Stdout, build.Stderr = e.root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/fido: %w", err)
		}
	}

	period := time.Second / time.Duration(o.rate)
	pacedN := int(o.paced.Seconds() * float64(o.rate))
	specs := []runSpec{
		{key: "burst", name: "burst", renderer: fido, deltas: o.deltas, lineEvery: o.line},
		{key: "paced", name: fmt.Sprintf("%d/s", o.rate), renderer: fido, deltas: pacedN, period: period, lineEvery: o.line},
		{key: "oneline", name: "burst, one line", renderer: fido, deltas: o.deltas},
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
		fmt.Fprintf(os.Stderr, "renderbench: %s (%d deltas)…\n", s.name, s.deltas)
		r, err := measure(e, s, filepath.Join(e.tmp, strconv.Itoa(len(rs))))
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rs = append(rs, r)
	}
	var fl floors
	if o.want("floor") {
		fmt.Fprintf(os.Stderr, "renderbench: floor reader…\n")
		if fl.burst, err = floor(e, o.deltas, o.line, 0); err != nil {
			return fmt.Errorf("floor, burst: %w", err)
		}
		if fl.paced, err = floor(e, pacedN, o.line, period); err != nil {
			return fmt.Errorf("floor, paced: %w", err)
		}
		fl.ok = true
	}
	report(rs, fl, o)
	return nil
}

type floors struct {
	burst, paced readerResult
	ok           bool
}

func report(rs []result, fl floors, o options) {
	fmt.Println("Neovim while streaming (a second client's nvim_eval latency, writes into Neovim, Neovim's CPU and memory)")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\tdeltas\twall\teval p50\tp99\tmax\twaits>16ms\twrites/s\tnvim CPU\tnvim RSS\tapply max\thost CPU\tok\t")
	for _, r := range rs {
		secs := r.wall.Seconds()
		fmt.Fprintf(w, "%s\t%d\t%.2fs\t%s\t%s\t%s\t%d\t%.0f\t%s\t%s MB\t%s\t%s\t%v\t\n",
			r.name, r.deltas, secs, ms(r.pct(0.5)), ms(r.pct(0.99)), ms(r.pct(1)), r.nOver16,
			float64(r.writes)/secs, cpuFig(r.nvimCPU, r.wall, r.period > 0 || r.renderer == probe), mb(r.nvimRSS),
			ms(r.applyMax), cpuFig(r.hostCPU, r.wall, r.period > 0), r.transcriptOK)
	}
	w.Flush()
	fmt.Println("goal: max ≤ 10 ms, nothing over 16 ms, ≤ 40 writes/s; Neovim's RSS after the one-line answer < 50 MB")
	for _, r := range rs {
		if r.renderer != fido {
			continue
		}
		var miss []string
		if r.pct(1) > 10*time.Millisecond {
			miss = append(miss, "max latency "+ms(r.pct(1)))
		}
		if r.nOver16 > 0 {
			miss = append(miss, fmt.Sprintf("%d waits over 16 ms", r.nOver16))
		}
		if ws := float64(r.writes) / r.wall.Seconds(); ws > 40 {
			miss = append(miss, fmt.Sprintf("%.0f writes/s", ws))
		}
		if r.key == "oneline" && r.nvimRSS >= 50<<20 {
			miss = append(miss, "RSS "+mb(r.nvimRSS)+" MB")
		}
		if !r.transcriptOK {
			miss = append(miss, "transcript incomplete")
		}
		if len(miss) > 0 {
			fmt.Printf("  MISSED (%s): %s\n", r.name, strings.Join(miss, ", "))
		}
	}

	if !fl.ok {
		return
	}
	fmt.Println("\nHost CPU beside the floor (a process that only reads the same stream, splits the SSE events and parses each chunk with gjson)")
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "load\thost\tfloor\thost/floor\tgoal\tmet\t")
	for _, l := range []struct {
		key  string
		f    readerResult
		goal string
	}{
		{"burst", fl.burst, "≤ 0.05 s and ≤ 2× the floor"},
		{"paced", fl.paced, "≤ 0.5 % of a core and ≤ 2× the floor"},
	} {
		paced := l.key == "paced"
		name := fmt.Sprintf("%d deltas, burst", l.f.Deltas)
		if paced {
			name = fmt.Sprintf("%d deltas, %d/s", l.f.Deltas, o.rate)
		}
		floor := cpuFig(l.f.CPU, l.f.Wall, paced)
		r, ok := find(rs, l.key)
		if !ok {
			fmt.Fprintf(w, "%s\t-\t%s\t-\t%s\t-\t\n", name, floor, l.goal)
			continue
		}
		ratio := r.hostCPU.Seconds() / l.f.CPU.Seconds()
		met := r.hostCPU <= 50*time.Millisecond
		if paced {
			ratio = share(r.hostCPU, r.wall) / share(l.f.CPU, l.f.Wall)
			met = share(r.hostCPU, r.wall) <= 0.005
		}
		met = met && ratio <= 2
		fmt.Fprintf(w, "%s\t%s\t%s\t%.1f×\t%s\t%v\t\n", name, cpuFig(r.hostCPU, r.wall, paced), floor, ratio, l.goal, met)
	}
	w.Flush()
	fmt.Printf("floor read %d and %d deltas (%.1f MB and %.1f MB of SSE)\n",
		fl.burst.Deltas, fl.paced.Deltas, float64(fl.burst.Bytes)/1e6, float64(fl.paced.Bytes)/1e6)
}

func find(rs []result, key string) (result, bool) {
	for _, r := range rs {
		if r.key == key {
			return r, true
		}
	}
	return result{}, false
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
