package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/neovim/go-client/nvim"
	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent/openrouter"
)

// readerArg, as the first argument, runs this binary as the floor reader or
// the naive renderer: a separate process, so its CPU is measured like the
// host's.
const readerArg = "reader"

// readerResult is what a reader process prints (JSON) when the stream ends.
type readerResult struct {
	CPU    time.Duration `json:"cpu"`  // its own CPU from the request to the end
	Wall   time.Duration `json:"wall"` // from the request to the end
	Deltas int           `json:"deltas"`
	Bytes  int64         `json:"bytes"`
	Writes int           `json:"writes"` // naive: batches applied in Neovim
}

// readerMain is the reader process: it requests one completion from url and
// reads the SSE stream. With sock empty it is the floor: it splits events and
// parses each chunk with gjson, nothing else. With sock set it is the naive
// renderer: every content delta is written into Fido's transcript buffer at
// once, one bridge.apply call each, never coalesced.
func readerMain(args []string) int {
	fs := flag.NewFlagSet(readerArg, flag.ContinueOnError)
	url := fs.String("url", "", "chat completions URL")
	sock := fs.String("sock", "", "Neovim's socket: render naively into it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	res, err := read(*url, *sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "renderbench reader:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 1
	}
	return 0
}

func read(url, sock string) (readerResult, error) {
	var res readerResult
	onDelta := func(string) error { return nil }
	if sock != "" {
		v, err := nvim.Dial(sock, nvim.DialLogf(func(string, ...any) {}))
		if err != nil {
			return res, err
		}
		defer v.Close()
		r, err := newNaiveRenderer(v)
		if err != nil {
			return res, err
		}
		onDelta = func(d string) error {
			res.Writes++
			return r.add(d)
		}
	}
	cpu0, start := cpuTime(os.Getpid()), time.Now()
	body := `{"model":"bench/model","stream":true,"messages":[{"role":"user","content":"stream"}]}`
	// The protocol the host speaks (HTTP/1.1, also over TLS: see
	// openrouter.NewTransport), so both read the same bytes the same way.
	resp, err := (&http.Client{Transport: openrouter.NewTransport()}).Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return res, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		res.Bytes += int64(len(line))
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // the blank line between events, comments
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		if c := gjson.GetBytes(data, "choices.0.delta.content"); c.Str != "" {
			res.Deltas++
			if err := onDelta(c.Str); err != nil {
				return res, err
			}
		}
	}
	res.CPU, res.Wall = cpuTime(os.Getpid())-cpu0, time.Since(start)
	return res, nil
}

// naiveRenderer keeps the streamed answer's lines and sends the changed tail
// into Fido's transcript buffer after every delta, through the same
// bridge.apply the host uses, so only the coalescing differs.
type naiveRenderer struct {
	v       *nvim.Nvim
	row0    int      // the buffer row of the answer's first line
	lines   []string // the answer so far
	flushes int64
}

func newNaiveRenderer(v *nvim.Nvim) (*naiveRenderer, error) {
	r := &naiveRenderer{v: v, lines: []string{""}}
	if err := v.ExecLua(`return vim.api.nvim_buf_line_count(vim.fn.bufnr("fido://transcript"))`, &r.row0); err != nil {
		return nil, err
	}
	if err := v.ExecLua(`return require("fido").status().flushes`, &r.flushes); err != nil {
		return nil, err
	}
	return r, nil
}

// naiveOps is the transcript part of a bridge.apply batch.
type naiveOps struct {
	Trim   int      `msgpack:"trim"`
	Set    []any    `msgpack:"set"`
	From   int      `msgpack:"from"`
	Lines  []string `msgpack:"lines"`
	Groups []string `msgpack:"groups"`
}

func (r *naiveRenderer) add(delta string) error {
	parts := strings.Split(delta, "\n")
	from := len(r.lines) - 1
	r.lines[from] += parts[0]
	r.lines = append(r.lines, parts[1:]...)
	r.flushes++
	batch := map[string]any{
		"transcript": naiveOps{Set: []any{}, From: r.row0 + from, Lines: r.lines[from:], Groups: make([]string, len(r.lines)-from)},
		"flushes":    r.flushes,
	}
	return r.v.ExecLua(`require("fido.bridge").apply(...)`, nil, batch)
}
