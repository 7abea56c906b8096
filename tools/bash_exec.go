package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

//go:embed bash_exec.md
var bashExecDescription string

const (
	bashDefaultTimeout = 120
	bashMaxTimeout     = 600
	bashHeadBytes      = 16 << 10 // output kept from the start
	bashTailBytes      = 16 << 10 // output kept from the end
	bashKillGrace      = 2 * time.Second
	bashDrainWait      = time.Second
	bashPromptMaxRunes = 2000
	bashPromptMaxLines = 40
)

// The approval choices, in the order the user sees them.
const (
	BashRunOnce = "Run once"
	BashAlways  = "Always this session"
	BashDeny    = "Deny"
)

// bashQuietEnv makes common tools behave non-interactively: no pagers, no
// colours, no credential prompts, no editor waiting for a terminal.
var bashQuietEnv = []string{
	"TERM=dumb",
	"NO_COLOR=1",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_EDITOR=true",
	"DEBIAN_FRONTEND=noninteractive",
}

// BashTool runs a shell command in the workspace root after the user approved it.
//
// Approval is session-scoped state of the tool value: when the user picks
// "Always this session", later calls of the same BashTool run without asking
// until the process (the Fido session) ends. A new BashTool asks again.
type BashTool struct {
	ws     *Workspace
	p      Prompter
	asking chan struct{} // holds one token: one approval prompt at a time
	always atomic.Bool
	// killGrace is the time between SIGTERM and SIGKILL when stopping the
	// command's process group.
	killGrace time.Duration
}

// NewBashTool returns bash_exec for ws; p asks the user for approval (nil: every call is refused).
func NewBashTool(ws *Workspace, p Prompter) *BashTool {
	t := &BashTool{ws: ws, p: p, asking: make(chan struct{}, 1), killGrace: bashKillGrace}
	t.asking <- struct{}{}
	return t
}

type bashParams struct {
	Command string `json:"command"`
	Timeout *int   `json:"timeout"`
}

func (t *BashTool) Name() string        { return "bash_exec" }
func (t *BashTool) Description() string { return bashExecDescription }
func (t *BashTool) Access() Access      { return Mutating }
func (t *BashTool) Parameters() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "Script for bash -c, run in the workspace root after the user approves it."},
    "timeout": {"type": "integer", "minimum": 1, "maximum": 600, "description": "Seconds before the command and all its child processes are killed. Default 120."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)
}

func (t *BashTool) SummarizeCall(args json.RawMessage) string {
	var p bashParams
	_ = json.Unmarshal(args, &p)
	return commandLine(p.Command, 80)
}

// commandLine shortens a possibly multi-line command to one line of at most n runes.
func commandLine(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	first := strings.TrimSpace(lines[0])
	if rest := len(lines) - 1; rest > 0 {
		return Shorten(first, n) + fmt.Sprintf(" … (+%d lines)", rest)
	}
	return Shorten(first, n)
}

func (t *BashTool) Run(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error) {
	// The registry's guard already refuses subagents; this keeps a direct call just as safe.
	if res, denied := Guard(inv, t); denied {
		return res, nil
	}
	var p bashParams
	if err := DecodeArgs(args, &p); err != nil {
		return ErrorResult("bash_exec: %v", err), nil
	}
	if strings.TrimSpace(p.Command) == "" {
		return ErrorResult("bash_exec: command is required"), nil
	}
	timeout, note := bashDefaultTimeout, ""
	if p.Timeout != nil {
		switch {
		case *p.Timeout < 1:
			return ErrorResult("bash_exec: timeout must be at least 1 second, got %d", *p.Timeout), nil
		case *p.Timeout > bashMaxTimeout:
			timeout, note = bashMaxTimeout, fmt.Sprintf(" (the requested %ds is above the maximum)", *p.Timeout)
		default:
			timeout = *p.Timeout
		}
	}
	if t.p == nil {
		return ErrorResult("bash_exec needs an editor to ask for approval; nothing was run"), nil
	}
	if res, ok := t.approve(ctx, p.Command); !ok {
		return res, nil
	}
	res := t.execute(ctx, p.Command, time.Duration(timeout)*time.Second, note)
	// The command may have changed any file: let the editor re-check its buffers.
	if r, ok := t.ws.Editor.(Refresher); ok {
		r.RefreshAll(ctx)
	}
	return res, nil
}

// approve asks the user unless they already allowed every command of this
// session. ok is false with the result to return when nothing may run.
func (t *BashTool) approve(ctx context.Context, command string) (Result, bool) {
	if t.always.Load() {
		return Result{}, true
	}
	select {
	case <-t.asking:
		defer func() { t.asking <- struct{}{} }()
	case <-ctx.Done():
		return bashDeclined("cancelled while waiting for approval", "the call was cancelled before the user approved it"), false
	}
	// Another call may have been allowed for the session while this one waited.
	if t.always.Load() {
		return Result{}, true
	}
	idx, err := t.p.Select(ctx, bashPrompt(t.ws.Root, command), []string{BashRunOnce, BashAlways, BashDeny})
	if ctx.Err() != nil {
		return bashDeclined("cancelled while waiting for approval", "the call was cancelled before the user approved it"), false
	}
	if err != nil {
		return ErrorResult("bash_exec: could not ask the user for approval: %v; nothing was run", err), false
	}
	switch idx {
	case 0:
		return Result{}, true
	case 1:
		t.always.Store(true)
		return Result{}, true
	case 2:
		return bashDeclined("denied by the user", "the user denied running this command"), false
	}
	return bashDeclined("not approved (prompt dismissed)", "the user dismissed the approval prompt without approving"), false
}

func bashDeclined(summary, why string) Result {
	msg := why + "; nothing was run. Do not retry the same command: continue without it, or ask the user (ask_user) what to do instead."
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "declined", "message": msg}})
	return Result{Content: string(b), IsError: true, Summary: summary}
}

// bashPrompt is the approval question. A very long command is cut for
// display, and the prompt says so: approval still runs the whole command.
func bashPrompt(root, command string) string {
	shown := strings.TrimRight(command, "\n")
	if lines := strings.Split(shown, "\n"); len(lines) > bashPromptMaxLines {
		shown = strings.Join(lines[:bashPromptMaxLines], "\n")
	}
	if utf8.RuneCountInString(shown) > bashPromptMaxRunes {
		shown = string([]rune(shown)[:bashPromptMaxRunes])
	}
	note := ""
	if hidden := len(strings.TrimRight(command, "\n")) - len(shown); hidden > 0 {
		note = fmt.Sprintf("\n[… %d more bytes not shown; approving runs the whole command]", hidden)
	}
	return fmt.Sprintf("Run in %s?\n$ %s%s", root, shown, note)
}

// bashEnv is the child's environment: env without Fido's keys, plus the
// non-interactive settings (which replace inherited values).
func bashEnv(env []string) []string {
	drop := map[string]bool{}
	// Fido's keys: a command like `env` must not put them into the conversation.
	for _, k := range SecretEnv {
		drop[k] = true
	}
	for _, kv := range bashQuietEnv {
		drop[kv[:strings.IndexByte(kv, '=')]] = true
	}
	out := make([]string, 0, len(env)+len(bashQuietEnv))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, bashQuietEnv...)
}

// execute runs the approved command and reports how it ended.
func (t *BashTool) execute(ctx context.Context, command string, timeout time.Duration, timeoutNote string) Result {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return ErrorResult("bash_exec: bash is not installed or not on PATH: %v; nothing was run", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return ErrorResult("bash_exec: cannot create the output pipe: %v; nothing was run", err)
	}
	cmd := exec.Command(bash, "-c", command)
	cmd.Dir = t.ws.Root
	cmd.Env = bashEnv(os.Environ())
	// Stdin nil is /dev/null. One pipe for stdout and stderr keeps their order.
	cmd.Stdout, cmd.Stderr = w, w
	// A new session: its own process group (so the whole tree can be killed)
	// and no controlling terminal (so nothing can prompt on the editor's TTY).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if ctx.Err() != nil {
		_ = r.Close()
		_ = w.Close()
		return bashDeclined("cancelled before it started", "the call was cancelled before the command started")
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return ErrorResult("bash_exec: cannot start bash: %v; nothing was run", err)
	}
	_ = w.Close()
	pgid := cmd.Process.Pid

	out := &outputCapture{headMax: bashHeadBytes, tailMax: bashTailBytes}
	drained := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, r)
		close(drained)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var ended string // "", "timeout" or "cancelled"
	select {
	case <-waited:
	case <-timer.C:
		ended = "timeout"
	case <-ctx.Done():
		ended = "cancelled"
	}
	elapsed := time.Since(start)
	// Stop the tree on timeout or cancel; after a normal exit, stop what the
	// command left running in the background (it would hold the output open).
	stopProcessGroup(pgid, t.killGrace)
	if ended != "" {
		<-waited
	}
	escaped := false
	select {
	case <-drained:
	case <-time.After(bashDrainWait):
		// A process that left the group (setsid, daemon) still holds the pipe.
		escaped = true
		_ = r.SetReadDeadline(time.Now())
		<-drained
	}
	_ = r.Close()

	var status, summary string
	isError := true
	switch ended {
	case "timeout":
		status = fmt.Sprintf("killed after timeout (%s)", wholeSeconds(timeout))
		summary = "timed out after " + wholeSeconds(timeout)
	case "cancelled":
		status = "cancelled (the turn was interrupted); the command and its child processes were killed"
		summary = "cancelled after " + shortDuration(elapsed)
	default:
		ps := cmd.ProcessState
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = "killed by signal " + bashSignalName(ws.Signal())
			summary = "killed by " + bashSignalName(ws.Signal()) + " · " + shortDuration(elapsed)
		} else {
			status = "exit code " + strconv.Itoa(ps.ExitCode())
			summary = fmt.Sprintf("exit %d · %s", ps.ExitCode(), shortDuration(elapsed))
			isError = ps.ExitCode() != 0
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\n", commandLine(command, 200))
	fmt.Fprintf(&b, "status: %s\n", status)
	fmt.Fprintf(&b, "duration: %s\n", shortDuration(elapsed))
	if timeoutNote != "" {
		fmt.Fprintf(&b, "note: the timeout was capped at %s%s\n", wholeSeconds(timeout), timeoutNote)
	}
	if escaped {
		b.WriteString("note: a background process outside the command's process group kept the output open; its later output was not captured\n")
	}
	b.WriteString(out.render())
	return Result{Content: b.String(), IsError: isError, Summary: summary}
}

// stopProcessGroup ends process group pgid: SIGTERM, then SIGKILL if anything
// of it still runs after grace.
func stopProcessGroup(pgid int, grace time.Duration) {
	if !processGroupRunning(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			// SIGKILL is delivered asynchronously: wait briefly so that the
			// tree is gone when the call returns.
			for end := time.Now().Add(time.Second); processGroupRunning(pgid) && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
			return
		case <-tick.C:
			if !processGroupRunning(pgid) {
				return
			}
		}
	}
}

// processGroupRunning reports whether process group pgid has a live member. Where
// /proc exists, zombies do not count: an init that does not reap (as in some
// containers) would otherwise keep a killed group "alive" forever.
func processGroupRunning(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	sawProc := false
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		sawProc = true
		// pid (comm) state ppid pgrp …; comm may contain spaces and parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return !sawProc
}

// outputCapture keeps the first headMax and the last tailMax bytes written.
type outputCapture struct {
	headMax, tailMax int
	head, tail       []byte
	total            int64
}

func (h *outputCapture) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.headMax - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*h.tailMax {
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.tailMax:]...)
	}
	return n, nil
}

// render is the output section of the result: everything, or head and tail
// around a marker saying how much was left out.
func (h *outputCapture) render() string {
	if h.total == 0 {
		return "output: (none)\n"
	}
	head, tail := h.head, h.tail
	if len(tail) > h.tailMax {
		tail = tail[len(tail)-h.tailMax:]
	}
	omitted := h.total - int64(len(head)) - int64(len(tail))
	var b strings.Builder
	if omitted == 0 {
		fmt.Fprintf(&b, "output (stdout and stderr interleaved, %d bytes):\n", h.total)
		b.WriteString(strings.ToValidUTF8(string(head)+string(tail), "\uFFFD"))
	} else {
		// Cut at character boundaries; the partial characters count as omitted.
		if cut := utf8PartialSuffix(head); cut < len(head) {
			omitted += int64(len(head) - cut)
			head = head[:cut]
		}
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
			omitted++
		}
		fmt.Fprintf(&b, "output (stdout and stderr interleaved, %d bytes; only the first %d and last %d bytes are shown):\n",
			h.total, len(head), len(tail))
		b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
		if len(head) > 0 && head[len(head)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "… %d bytes omitted …\n", omitted)
		b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	}
	if s := b.String(); !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// shortDuration is a short human duration: 0.3s, 12.5s, 2m05s.
func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// bashSignalName is the conventional name of the signals commands usually die of.
func bashSignalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGBUS:
		return "SIGBUS"
	}
	return fmt.Sprintf("%d (%s)", int(sig), sig)
}

// wholeSeconds formats a whole-second timeout: 120s.
func wholeSeconds(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }

// utf8PartialSuffix returns where an incomplete UTF-8 sequence at the end of b
// starts, or len(b) when b ends on a character boundary.
func utf8PartialSuffix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
