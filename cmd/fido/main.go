// Command fido is Fido's Go host: started by the Neovim plugin as a
// msgpack-RPC job (`fido serve`), it runs the agent and drives Neovim.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/js"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/shell"
)

// version is set at build time (-ldflags "-X main.version=…").
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stderr)
	case js.WorkerCommand: // internal: runs one javascript_execute snippet
		return js.RunWorker(os.Stdin, os.Stdout)
	case sandbox.HelperCommand: // internal: restricts itself, then runs one command
		return sandbox.RunHelper(args)
	case shell.GuardCommand: // internal: runs one MCP server under its guard
		return shell.RunGuard(args)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "fido", versionString())
		return 0
	case "doctor":
		return doctor(args, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "fido: unknown command %q\n%s", cmd, usage)
	return 2
}

const usage = `usage: fido <command>
  serve [--root DIR]   serve msgpack-RPC on stdin/stdout (started by the Neovim plugin)
  doctor [--root DIR]  print the resolved configuration (never key values)
  doctor --sandbox     print what the command sandbox enforces here
  version              print the version
`

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			return "dev-" + rev + dirty
		}
	}
	return "dev"
}

func rootFlag(name string, args []string) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	root := fs.String("root", "", "workspace root (default: current directory)")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if *root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		*root = wd
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace root %s is not a directory", abs)
	}
	return abs, nil
}

func doctor(args []string, out io.Writer) int {
	if len(args) > 0 && args[0] == "--sandbox" {
		// What the sandbox enforces here, for :checkhealth fido.
		doctorSandbox(out, os.Getenv)
		return 0
	}
	root, err := rootFlag("doctor", args)
	if err != nil {
		fmt.Fprintln(out, "fido doctor:", err)
		return 2
	}
	cfg := agent.ConfigFromEnv(os.Getenv)
	set := func(v string) string {
		if v == "" {
			return "not set"
		}
		return "set"
	}
	look := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		return "not found"
	}
	reasoning := cfg.Reasoning
	if reasoning == "" {
		reasoning = "model default"
	}
	fmt.Fprintf(out, "fido %s\n", versionString())
	fmt.Fprintf(out, "model:              %s\n", cfg.Model)
	fmt.Fprintf(out, "base URL:           %s\n", cfg.BaseURL)
	fmt.Fprintf(out, "reasoning:          %s\n", reasoning)
	if cfg.ContextTokens > 0 {
		fmt.Fprintf(out, "context budget:     ~%d tokens (FIDO_CONTEXT_TOKENS)\n", cfg.ContextTokens)
	} else {
		fmt.Fprintf(out, "context budget:     3/4 of the model's window from the model list, else ~%d tokens\n", agent.DefaultContextBudget)
	}
	fmt.Fprintf(out, "idle timeout:       %s (FIDO_IDLE_TIMEOUT)\n", cfg.IdleTimeout)
	for _, w := range cfg.Warnings {
		fmt.Fprintf(out, "warning:            %s\n", w)
	}
	fmt.Fprintf(out, "OPENROUTER_API_KEY: %s\n", set(cfg.APIKey))
	fmt.Fprintf(out, "TAVILY_API_KEY:     %s\n", set(cfg.TavilyKey))
	if cfg.APIKey == "" && os.Getenv(apiKeyCmdEnv) != "" {
		fmt.Fprintf(out, "api_key_cmd:        set (the host runs it when it starts)\n")
	}
	fmt.Fprintf(out, "workspace:          %s\n", root)
	fmt.Fprintf(out, "state root:         %s\n", cfg.StateRoot)
	fmt.Fprintf(out, "workspace state:    %s\n", cfg.WorkspaceStateDir(root))
	fmt.Fprintf(out, "nvim:               %s\n", look("nvim"))
	fmt.Fprintf(out, "rg:                 %s\n", look("rg"))
	fmt.Fprintf(out, "sandbox:            %s (%s; fido doctor --sandbox for details)\n", sandbox.Probe().Summary(), sandboxModeLine(os.Getenv))
	return 0
}

func sandboxModeLine(getenv func(string) string) string {
	mode, err := shell.ParseSandboxMode(getenv(sandboxEnv))
	if err != nil {
		return err.Error()
	}
	return "mode " + mode
}

// hostGCPercent is the host's garbage collection target. Its live heap is
// a few megabytes, so at Go's default of 100 the few hundred kilobytes a
// streamed answer allocates set off a collection in the middle of most
// answers, and on a small virtual machine that collection cost the host
// more CPU than reading the answer (the 20,000-delta burst of make
// bench-render: 0.039-0.044 s at 100, 0.028-0.031 s at 200). 200 lets the
// heap grow to three times what is live instead of twice.
const hostGCPercent = 200

// gcPercent is the collection target to set, unless the user chose one
// with GOGC.
func gcPercent(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return hostGCPercent, true
}

func serve(args []string, stderr io.Writer) int {
	root, err := rootFlag("serve", args)
	if err != nil {
		fmt.Fprintln(stderr, "fido serve:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if p, ok := gcPercent(os.Getenv); ok {
		debug.SetGCPercent(p)
	}
	// FIDO_CPUPROFILE=prefix writes a CPU profile of the session to prefix.<pid>
	// (for `go tool pprof`).
	if path := os.Getenv("FIDO_CPUPROFILE"); path != "" {
		if f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	if err := serveRPC(ctx, root, os.Getenv); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "fido serve:", err)
		return 1
	}
	return 0
}
