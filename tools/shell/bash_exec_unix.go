//go:build unix

package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

// execute runs the approved command (in the sandbox when box is set; see
// sandboxed.go) and reports how it ended.
func (t *BashTool) execute(ctx context.Context, command string, timeout time.Duration, timeoutNote string, box *boxRun) tools.Result {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return tools.ErrorResult("bash_exec: bash is not installed or not on PATH: %v; nothing was run", err)
	}
	cmd, sandboxed, err := box.command(bash, command)
	if err != nil {
		return box.failed(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return tools.ErrorResult("bash_exec: cannot create the output pipe: %v; nothing was run", err)
	}
	cmd.Dir = t.ws.Root
	cmd.Env = box.env(bashEnv(os.Environ()))
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
	// Held while the command starts and runs: a stray sweep of another call
	// must not take this command's fresh session for a stray.
	bashSessions.Lock()
	if err := sandboxed.Start(); err != nil {
		bashSessions.Unlock()
		_ = r.Close()
		_ = w.Close()
		if box != nil {
			return box.failed(err)
		}
		return tools.ErrorResult("bash_exec: cannot start bash: %v; nothing was run", err)
	}
	cmd = sandboxed.process() // the sandbox's helper became the command
	pgid := cmd.Process.Pid
	bashSessions.live[pgid] = true
	bashSessions.Unlock()
	_ = w.Close()

	out := &outputCapture{headMax: bashHeadBytes, tailMax: bashTailBytes}
	drained := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, r)
		close(drained)
	}()
	waited := make(chan error, 1)
	go func() { waited <- sandboxed.Wait() }()

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
	leftRunning := stopProcessGroup(pgid, t.killGrace)
	if ended != "" {
		<-waited
	}
	untrackSession(pgid)
	// What left the group (setpgid) or the session (setsid, a daemon's double
	// fork) is ended too: it would hold the output open and outlive Fido.
	strays := killStrays(map[int]bool{pgid: true}, time.Second)
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
	fmt.Fprintf(&b, "command: %s\n", text.Headline(command, 200))
	fmt.Fprintf(&b, "status: %s\n", status)
	fmt.Fprintf(&b, "duration: %s\n", shortDuration(elapsed))
	box.describe(&b, sandboxed)
	if timeoutNote != "" {
		fmt.Fprintf(&b, "note: the timeout was capped at %s%s\n", wholeSeconds(timeout), timeoutNote)
	}
	if ended == "" && leftRunning {
		b.WriteString("note: processes the command left running in the background were stopped\n")
	}
	switch {
	case strays == 1:
		b.WriteString("note: 1 process that left the command's process group (setsid, setpgid or a daemon's double fork) was still running and was killed\n")
	case strays > 1:
		fmt.Fprintf(&b, "note: %d processes that left the command's process group (setsid, setpgid or a daemon's double fork) were still running and were killed\n", strays)
	}
	if escaped {
		b.WriteString("note: a background process outside the command's process group kept the output open; its later output was not captured\n")
	}
	b.WriteString(out.render())
	return tools.Result{Content: b.String(), IsError: isError, Summary: summary}
}

// stopProcessGroup ends process group pgid: SIGTERM, then SIGKILL if anything
// of it still runs after grace. It reports whether anything was running.
func stopProcessGroup(pgid int, grace time.Duration) bool {
	if !processGroupRunning(pgid) {
		return false
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
			return true
		case <-tick.C:
			if !processGroupRunning(pgid) {
				return true
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

// killGroupNow sends SIGKILL to process group pgid.
func killGroupNow(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
