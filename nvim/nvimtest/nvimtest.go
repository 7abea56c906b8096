// Package nvimtest starts a real headless Neovim with Fido's plugin on its
// runtimepath for integration tests, and builds the real fido binary once per
// test binary.
//
// Neovim comes from $NVIM_BIN (default "nvim"). When it is missing, tests are
// skipped, or fail when $CI is set.
package nvimtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"
)

// Options configure one Neovim.
type Options struct {
	// Env is added to the environment (KEY=VALUE), after Fido's own variables
	// were stripped from the inherited one (no test ever reaches a real model).
	Env []string
	// Dir is Neovim's working directory (the workspace); default: a fresh
	// temporary directory.
	Dir string
	// Fido builds ./cmd/fido (once per test binary) and points the plugin at
	// it through FIDO_BINARY.
	Fido bool
	// Listen makes Neovim listen on a unix socket (Nvim.Addr) so that a
	// second client can connect.
	Listen bool
	// Args are extra Neovim arguments.
	Args []string
}

// Nvim is a running headless Neovim driven through the embedded channel.
type Nvim struct {
	*nvim.Nvim
	// Tmp is the per-test temporary root; Dir the workspace; StateDir is
	// FIDO_STATE_DIR; Addr the listen socket (with Options.Listen).
	Tmp, Dir, StateDir, Addr string
}

// stripped are inherited variables that would reach a real provider or a
// user's configuration.
var stripped = []string{
	"OPENROUTER_API_KEY=", "FIDO_BASE_URL=", "FIDO_MODEL=", "FIDO_REASONING=",
	"TAVILY_API_KEY=", "FIDO_TAVILY_URL=", "FIDO_STATE_DIR=", "FIDO_BINARY=",
	"NVIM=", "NVIM_LISTEN_ADDRESS=", "NVIM_LOG_FILE=", "XDG_", "VIMINIT=", "MYVIMRC=",
}

// Bin is the Neovim executable: $NVIM_BIN or "nvim".
func Bin() string {
	if b := os.Getenv("NVIM_BIN"); b != "" {
		return b
	}
	return "nvim"
}

// Require skips (or fails under CI) when no Neovim is found, and returns its path.
func Require(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath(Bin())
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("nvimtest: Neovim %q not found (CI is set): %v", Bin(), err)
		}
		t.Skipf("nvimtest: Neovim %q not found: %v", Bin(), err)
	}
	return p
}

// RepoRoot is the directory holding go.mod (the plugin root).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	must(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("nvimtest: go.mod not found above the working directory")
		}
		dir = parent
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Env returns the environment a test Neovim gets: the inherited one without
// Fido's and XDG variables, plus isolated XDG dirs and FIDO_STATE_DIR under tmp.
func Env(tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range stripped {
			if strings.HasPrefix(kv, p) {
				keep = false
				break
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(env,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "data"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"NVIM_LOG_FILE="+filepath.Join(tmp, "nvim.log"),
		"FIDO_STATE_DIR="+filepath.Join(tmp, "fido-state"),
	)
}

// Args are the Neovim arguments for the plugin at root.
func Args(root string) []string {
	return []string{"--embed", "--headless", "--clean", "-n", "-i", "NONE", "--cmd", "set rtp^=" + root}
}

// Start spawns Neovim; it is closed (and its temp dirs removed) when the test ends.
func Start(t testing.TB, opts Options) *Nvim {
	t.Helper()
	bin := Require(t)
	root := RepoRoot(t)
	tmp := t.TempDir()
	n := &Nvim{Tmp: tmp, Dir: opts.Dir, StateDir: filepath.Join(tmp, "fido-state")}
	if n.Dir == "" {
		n.Dir = filepath.Join(tmp, "ws")
		must(t, os.MkdirAll(n.Dir, 0o755))
	}
	env := Env(tmp)
	if opts.Fido {
		env = append(env, "FIDO_BINARY="+FidoBinary(t))
	}
	env = append(env, opts.Env...)
	args := Args(root)
	if opts.Listen {
		n.Addr = filepath.Join(tmp, "nvim.sock")
		args = append(args, "--listen", n.Addr)
	}
	args = append(args, opts.Args...)
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(bin),
		nvim.ChildProcessArgs(args...),
		nvim.ChildProcessEnv(env),
		nvim.ChildProcessDir(n.Dir),
		nvim.ChildProcessLogf(t.Logf),
	)
	must(t, err)
	n.Nvim = v
	t.Cleanup(func() {
		// Stop Fido's job first so the host exits before the temp dirs go.
		_ = v.ExecLua(`pcall(function() require("fido.host").stop() end)`, nil)
		_ = v.Close()
	})
	var one int
	must(t, v.Eval("1", &one))
	return n
}

// Lua runs code (a chunk; use `...` for args) and decodes its return value
// into result (nil to ignore it). It fails the test on error.
func (n *Nvim) Lua(t testing.TB, result any, code string, args ...any) {
	t.Helper()
	if err := n.ExecLua(code, result, args...); err != nil {
		t.Fatalf("nvimtest: lua %q: %v", code, err)
	}
}

// Bool evaluates a Lua expression as a boolean.
func (n *Nvim) Bool(t testing.TB, expr string, args ...any) bool {
	t.Helper()
	var ok bool
	n.Lua(t, &ok, "return ("+expr+") and true or false", args...)
	return ok
}

// WaitFor polls the Lua expression every 10 ms until it is truthy; the test
// fails after timeout with the last value of describe (a Lua expression, may
// be empty) to explain what was seen.
func (n *Nvim) WaitFor(t testing.TB, expr string, timeout time.Duration, describe ...string) {
	t.Helper()
	if err := n.Poll(expr, timeout); err != nil {
		var seen []string
		for _, d := range describe {
			var s string
			if e := n.ExecLua("return vim.inspect("+d+")", &s); e != nil {
				s = e.Error()
			}
			seen = append(seen, d+" = "+s)
		}
		t.Fatalf("nvimtest: %v\n%s", err, strings.Join(seen, "\n"))
	}
}

// Poll is WaitFor without a test: it returns an error after timeout.
func (n *Nvim) Poll(expr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		var ok bool
		lastErr = n.ExecLua("return ("+expr+") and true or false", &ok)
		if lastErr == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if lastErr != nil {
				return fmt.Errorf("timeout after %v waiting for %s: %w", timeout, expr, lastErr)
			}
			return fmt.Errorf("timeout after %v waiting for %s", timeout, expr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Lines returns all lines of the buffer named name (e.g. "fido://transcript").
func (n *Nvim) Lines(t testing.TB, name string) []string {
	t.Helper()
	var lines []string
	n.Lua(t, &lines, `local b = vim.fn.bufnr(...)
if b < 0 then return {} end
return vim.api.nvim_buf_get_lines(b, 0, -1, false)`, name)
	return lines
}

// Messages returns the output of :messages.
func (n *Nvim) Messages(t testing.TB) string {
	t.Helper()
	var s string
	must(t, n.Call("execute", &s, "messages"))
	return s
}

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// FidoBinary builds ./cmd/fido once per test binary and returns its path.
// Call Main from TestMain to remove it afterwards.
func FidoBinary(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "fido-nvimtest-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "fido")
		cmd := exec.Command("go", "build", "-o", buildBin, "./cmd/fido")
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/fido: %w\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatalf("nvimtest: %v", buildErr)
	}
	return buildBin
}

// Main runs the tests and removes the binary FidoBinary built:
//
//	func TestMain(m *testing.M) { nvimtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// ErrNoNvim is returned by Find when Neovim is not installed.
var ErrNoNvim = errors.New("nvimtest: neovim not found")

// Find returns the Neovim path, for programs (benchmarks) that are not tests.
func Find() (string, error) {
	p, err := exec.LookPath(Bin())
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoNvim, err)
	}
	return p, nil
}
