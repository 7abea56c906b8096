// Package tuitest runs the real Neovim TUI (not --embed) in a private tmux
// server (its own socket, removed afterwards) for tests of what a user sees and types: keys go in through
// `tmux send-keys` with a person's pauses, the screen comes back through
// `tmux capture-pane -p`, and Neovim's state is read over its --listen
// socket. Waits poll the screen or the state, never a fixed time.
//
// tmux comes from $PATH; without it tests are skipped, or fail when $CI is
// set. Neovim comes from $NVIM_BIN (see nvimtest).
package tuitest

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

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// Options configure one Neovim in tmux.
type Options struct {
	// Width and Height are the terminal's size (default 100x30).
	Width, Height int
	// Env is added to the environment nvimtest.Env gives (isolated XDG
	// directories and FIDO_STATE_DIR, no inherited Fido variables).
	Env []string
	// Dir is the workspace (Neovim's working directory); default: a fresh
	// temporary directory.
	Dir string
	// Fido points the plugin at the real fido binary (built once).
	Fido bool
	// Init is Lua run once the plugin is loaded, before the first screen
	// (a setup() call, a picker for vim.ui.select).
	Init string
	// KeyDelay is the pause between two typed characters (default 45 ms,
	// a quick typist).
	KeyDelay time.Duration
}

// TUI is a Neovim running in its own tmux server.
type TUI struct {
	// Tmp is the test's temporary root, Dir the workspace, StateDir
	// FIDO_STATE_DIR.
	Tmp, Dir, StateDir string

	t        testing.TB
	tmux     string
	socket   string
	addr     string
	keyDelay time.Duration

	mu  sync.Mutex
	rpc *nvim.Nvim
}

// Require skips (or fails under CI) when tmux is missing, and returns its path.
func Require(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tuitest: tmux not found (CI is set): %v", err)
		}
		t.Skipf("tuitest: tmux not found: %v", err)
	}
	return p
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Start runs Neovim with Fido's plugin in a new tmux server; the server is
// killed when the test ends (the screen is logged if the test failed).
func Start(t testing.TB, opts Options) *TUI {
	t.Helper()
	tmux := Require(t)
	bin := nvimtest.Require(t)
	root := nvimtest.RepoRoot(t)
	if opts.Width == 0 {
		opts.Width = 100
	}
	if opts.Height == 0 {
		opts.Height = 30
	}
	tmp := t.TempDir()
	u := &TUI{
		t: t, tmux: tmux, Tmp: tmp, Dir: opts.Dir, StateDir: filepath.Join(tmp, "fido-state"),
		socket: filepath.Join(os.TempDir(), fmt.Sprintf("fido-tmux-%d-%d.sock", os.Getpid(), time.Now().UnixNano()%1e9)),
		// A unix socket path must stay short: not under the test's TempDir.
		addr:     filepath.Join(os.TempDir(), fmt.Sprintf("fido-tui-%d-%d.sock", os.Getpid(), time.Now().UnixNano()%1e9)),
		keyDelay: opts.KeyDelay,
	}
	if u.keyDelay == 0 {
		u.keyDelay = 45 * time.Millisecond
	}
	if u.Dir == "" {
		u.Dir = filepath.Join(tmp, "ws")
		if err := os.MkdirAll(u.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := nvimtest.Env(tmp)
	if opts.Fido {
		env = append(env, "FIDO_BINARY="+nvimtest.FidoBinary(t))
	}
	env = append(env, opts.Env...)
	init := filepath.Join(tmp, "init.lua")
	if err := os.WriteFile(init, []byte(opts.Init), 0o644); err != nil {
		t.Fatal(err)
	}
	// env -i: exactly this environment (the tmux server has the test's).
	var script strings.Builder
	script.WriteString("#!/bin/sh\ncd " + shQuote(u.Dir) + " || exit 1\nexec env -i TERM=\"$TERM\"")
	for _, kv := range env {
		if strings.HasPrefix(kv, "TERM=") {
			continue
		}
		script.WriteString(" " + shQuote(kv))
	}
	for _, a := range []string{bin, "--clean", "-n", "-i", "NONE", "--listen", u.addr, "--cmd", "set rtp^=" + root,
		"-c", "luafile " + init} {
		script.WriteString(" " + shQuote(a))
	}
	script.WriteString("\n")
	run := filepath.Join(tmp, "run.sh")
	if err := os.WriteFile(run, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := u.cmd("-f", "/dev/null", "new-session", "-d", "-s", "fido", "-x", fmt.Sprint(opts.Width),
		"-y", fmt.Sprint(opts.Height), run); err != nil {
		t.Fatalf("tuitest: tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tuitest: the screen at the end:\n%s", u.Screen())
		}
		if u.rpc != nil {
			// Bounded: a blocking prompt (inputlist()) answers no request.
			_ = u.Lua(2*time.Second, nil, `pcall(function() require("fido.host").stop() end)`)
		}
		_, _ = u.cmd("kill-server")
		_ = os.Remove(u.socket)
		u.mu.Lock()
		if u.rpc != nil {
			_ = u.rpc.Close()
		}
		u.mu.Unlock()
		_ = os.Remove(u.addr)
	})
	// Neovim is up once its socket answers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if v, err := nvim.Dial(u.addr); err == nil {
			u.rpc = v
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tuitest: Neovim did not listen on %s; screen:\n%s", u.addr, u.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	u.WaitLua(t, "vim.v.vim_did_enter == 1", 20*time.Second)
	return u
}

func (u *TUI) cmd(args ...string) (string, error) {
	c := exec.Command(u.tmux, append([]string{"-S", u.socket}, args...)...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.String(), err
}

// Type types text one character at a time, KeyDelay apart, as a person does.
func (u *TUI) Type(text string) {
	u.t.Helper()
	for i, r := range text {
		if i > 0 {
			time.Sleep(u.keyDelay)
		}
		if out, err := u.cmd("send-keys", "-t", "fido", "-l", string(r)); err != nil {
			u.t.Fatalf("tuitest: send-keys %q: %v\n%s", r, err, out)
		}
	}
}

// Keys presses tmux keys (Enter, Escape, C-s, …), KeyDelay apart.
func (u *TUI) Keys(keys ...string) {
	u.t.Helper()
	for i, k := range keys {
		if i > 0 {
			time.Sleep(u.keyDelay)
		}
		if out, err := u.cmd("send-keys", "-t", "fido", k); err != nil {
			u.t.Fatalf("tuitest: send-keys %s: %v\n%s", k, err, out)
		}
	}
}

// Pause is a person's pause (thinking, reading) that the scene specifies.
func (u *TUI) Pause(d time.Duration) { time.Sleep(d) }

// Screen is the terminal's text now.
func (u *TUI) Screen() string {
	out, err := u.cmd("capture-pane", "-p", "-t", "fido")
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return out
}

// WaitScreen waits until the screen contains every one of texts and
// returns it.
func (u *TUI) WaitScreen(t testing.TB, timeout time.Duration, texts ...string) string {
	t.Helper()
	return u.WaitScreenFunc(t, timeout, "the screen shows "+strings.Join(texts, ", "), func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

// WaitScreenFunc waits until ok(screen) and returns that screen.
func (u *TUI) WaitScreenFunc(t testing.TB, timeout time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := u.Screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("tuitest: timeout after %v waiting until %s; screen:\n%s", timeout, what, s)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// ErrBlocked is Lua's error while Neovim serves no request (a blocking
// prompt such as inputlist() holds it).
var ErrBlocked = errors.New("tuitest: Neovim did not answer (blocked in a prompt?)")

// Lua runs code in Neovim over its socket; it gives up after timeout
// (ErrBlocked), since a blocking prompt makes Neovim serve nothing but
// fast calls.
func (u *TUI) Lua(timeout time.Duration, result any, code string, args ...any) error {
	u.mu.Lock()
	v := u.rpc
	u.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- v.ExecLua(code, result, args...) }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return ErrBlocked
	}
}

// Bool evaluates a Lua expression as a boolean (false when Neovim is blocked).
func (u *TUI) Bool(expr string, args ...any) bool {
	var ok bool
	if err := u.Lua(2*time.Second, &ok, "return ("+expr+") and true or false", args...); err != nil {
		return false
	}
	return ok
}

// WaitLua polls the Lua expression until it is truthy.
func (u *TUI) WaitLua(t testing.TB, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !u.Bool(expr) {
		if time.Now().After(deadline) {
			t.Fatalf("tuitest: timeout after %v waiting for %s; screen:\n%s", timeout, expr, u.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Mode is nvim_get_mode, which Neovim answers even inside a blocking prompt.
func (u *TUI) Mode() (mode string, blocking bool, err error) {
	u.mu.Lock()
	v := u.rpc
	u.mu.Unlock()
	m, err := v.Mode()
	if err != nil {
		return "", false, err
	}
	return m.Mode, m.Blocking, nil
}
