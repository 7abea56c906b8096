// Command jsbench measures what one javascript_execute call costs: each
// snippet runs in a worker process (bin/fido js-worker), started ahead of the
// call ("warm", what a session sees: the spare starts while the model
// thinks) or at the call ("cold", no spare).
//
//	go run ./cmd/jsbench [-worker bin/fido] [-runs 30]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/js"
	"github.com/fido-nvim/fido/tools/workspace"
)

const snippet = `const d = require("./data.json"); console.log(d.xs.length); d.xs.map(x => x * 2)`

func main() {
	worker := flag.String("worker", "bin/fido", "the fido binary whose js-worker subcommand runs snippets")
	runs := flag.Int("runs", 30, "timed calls per mode")
	flag.Parse()
	bin, err := filepath.Abs(*worker)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "jsbench: %v (run make first)\n", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "fido-jsbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsbench:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(`{"xs":[1,2,3,4,5]}`), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "jsbench:", err)
		os.Exit(1)
	}
	ws, err := workspace.New(dir, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsbench:", err)
		os.Exit(1)
	}
	args, _ := json.Marshal(map[string]any{"code": snippet})
	call := func(tool *js.JSTool) time.Duration {
		start := time.Now()
		res, err := tool.Run(context.Background(), tools.Invocation{}, args)
		took := time.Since(start)
		if err != nil || res.IsError {
			fmt.Fprintf(os.Stderr, "jsbench: call failed: %v %s\n", err, res.Content)
			os.Exit(1)
		}
		return took
	}

	warm := js.NewJSTool(ws, nil)
	warm.SetWorker(bin, js.WorkerCommand)
	warm.Prewarm()
	var warmTimes, coldTimes []time.Duration
	for i := 0; i < *runs; i++ {
		time.Sleep(150 * time.Millisecond) // the model thinking: the spare starts meanwhile
		warmTimes = append(warmTimes, call(warm))
	}
	warm.Close()
	for i := 0; i < *runs; i++ {
		cold := js.NewJSTool(ws, nil)
		cold.SetWorker(bin, js.WorkerCommand)
		coldTimes = append(coldTimes, call(cold))
		cold.Close()
	}
	fmt.Printf("javascript_execute, one call of %d runs (median / p90):\n", *runs)
	fmt.Printf("  warm (spare worker ready, as in a session): %8s / %8s\n", pct(warmTimes, 50), pct(warmTimes, 90))
	fmt.Printf("  cold (worker started by the call):          %8s / %8s\n", pct(coldTimes, 50), pct(coldTimes, 90))
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(10 * time.Microsecond)
}
