package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/neovim/go-client/nvim"

	fnvim "github.com/fido-nvim/fido/nvim"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// sizeShape is one kind of transcript batch whose apply cost -only sizes
// measures at several sizes: what a burst's first flush carries.
type sizeShape struct {
	name  string
	sizes []int
	// fill adds one batch's worth of text of size n to the model; before,
	// when not nil, runs (and is flushed) first, unmeasured.
	fill, before func(tr *fnvim.Transcript, n int)
}

const sizeReps = 15 // batches per size; the table shows their median and max

func answerLines(tr *fnvim.Transcript, n int) {
	for i := 0; i < n; i++ {
		tr.Content("word word word word word word word word\n")
	}
}

var sizeShapes = []sizeShape{
	{name: "answer lines (40 B)", sizes: []int{125, 250, 500, 1000, 2000, 4000}, fill: answerLines},
	{name: "reasoning lines (40 B, highlighted)", sizes: []int{125, 250, 500, 1000, 2000, 4000}, fill: func(tr *fnvim.Transcript, n int) {
		for i := 0; i < n; i++ {
			tr.Reasoning("word word word word word word word word\n")
		}
	}},
	// A new line of n bytes, appended to the row the last batch started.
	{name: "one new line of n bytes", sizes: []int{4 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10},
		before: func(tr *fnvim.Transcript, n int) { tr.Content("\nw") },
		fill:   func(tr *fnvim.Transcript, n int) { tr.Content(strings.Repeat("word ", n/5)) }},
	// 4 KB appended to a line already n bytes long: what every batch of a
	// one-line answer costs once the line is long (moving the cursor to its
	// end is O(line) in Neovim).
	{name: "4 KB onto a line of n bytes", sizes: []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 256 << 10, 512 << 10},
		before: func(tr *fnvim.Transcript, n int) { tr.Content("\n" + strings.Repeat("word ", n/5)) },
		fill:   func(tr *fnvim.Transcript, n int) { tr.Content(strings.Repeat("word ", 4<<10/5)) }},
}

// sizes measures what applying one transcript batch costs Neovim, by size:
// batches built by the host's own transcript model and sent to
// bridge.apply as the host sends them, into the sidebar's transcript
// window, timed inside Lua. It picks the bound on each batch (fnvim.Limit).
func sizes(e env) error {
	dir := filepath.Join(e.tmp, "sizes")
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		return err
	}
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(e.nvimBin),
		nvim.ChildProcessArgs(nvimtest.Args(e.root)...),
		nvim.ChildProcessEnv(nvimtest.Env(dir)),
		nvim.ChildProcessDir(filepath.Join(dir, "ws")),
		nvim.ChildProcessLogf(func(string, ...any) {}),
	)
	if err != nil {
		return err
	}
	defer v.Close()
	var version string
	if err := v.ExecLua(`vim.o.columns = 200; vim.o.lines = 50; require("fido.layout").open(false)
local b = require("fido.bridge")
local apply = b.apply
b.apply = function(batch)
  local t = vim.loop.hrtime()
  local resync = apply(batch)
  _G.renderbench_apply = vim.loop.hrtime() - t
  return resync
end
local v = vim.version()
return string.format("%d.%d.%d", v.major, v.minor, v.patch)`, &version); err != nil {
		return err
	}
	fmt.Printf("Lua apply time of one transcript batch by size (Neovim %s, %s, median and max of %d batches)\n",
		version, e.nvimBin, sizeReps)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "batch\tsize\tbytes\tlines\tmedian\tmax\t")
	var flushes int64
	for _, s := range sizeShapes {
		tr := fnvim.NewTranscript(0)
		tr.User("q")
		send := func() (bytes, lines int, d time.Duration, err error) {
			ops := tr.Flush()
			flushes++
			for _, l := range ops.Lines {
				bytes, lines = bytes+len(l), lines+1
			}
			if ops.Append != nil {
				bytes, lines = bytes+len(ops.Append.Text), lines+1
			}
			var resync bool
			if err := v.ExecLua(`return require("fido.bridge").apply(...)`, &resync, &fnvim.Batch{Transcript: &ops, Flushes: flushes}); err != nil {
				return 0, 0, 0, err
			}
			if resync {
				return 0, 0, 0, fmt.Errorf("the transcript buffer did not hold what the batches wrote")
			}
			var ns int64
			err = v.ExecLua(`return _G.renderbench_apply`, &ns)
			return bytes, lines, time.Duration(ns), err
		}
		// The buffer as a stream leaves it before the measured batches.
		answerLines(tr, 1000)
		if _, _, _, err := send(); err != nil {
			return err
		}
		for _, n := range s.sizes {
			var ds []time.Duration
			var bytes, lines int
			for r := 0; r < sizeReps; r++ {
				if s.before != nil {
					s.before(tr, n)
					if _, _, _, err := send(); err != nil {
						return err
					}
				}
				s.fill(tr, n)
				b, l, d, err := send()
				if err != nil {
					return err
				}
				bytes, lines = max(bytes, b), max(lines, l)
				ds = append(ds, d)
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\t\n", s.name, n, bytes, lines, ms(ds[len(ds)/2]), ms(ds[len(ds)-1]))
		}
	}
	w.Flush()
	fmt.Printf("bound in use (nvim.DefaultLimit): %d bytes, %d lines per batch\n", fnvim.DefaultLimit.Bytes, fnvim.DefaultLimit.Lines)
	return nil
}
