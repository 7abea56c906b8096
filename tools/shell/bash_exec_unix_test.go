//go:build unix

package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
)

func TestBashExecKillsProcessTree(t *testing.T) {
	toolstest.RequireProcFS(t)
	// The shell records its pid and the pid of a grandchild, then waits.
	const script = `echo started; echo $$ > pids; bash -c 'sleep 30 & echo $! >> pids; wait' & sleep 30; echo never`
	for _, tc := range []struct {
		name        string
		timeout     int
		grace       time.Duration
		script      string
		cancel      bool
		wantSummary string
		wantStatus  string
	}{
		{name: "cancel", timeout: 60, grace: 2 * time.Second, script: script, cancel: true, wantSummary: "cancelled after", wantStatus: "status: cancelled (the turn was interrupted)"},
		{name: "timeout", timeout: 1, grace: 2 * time.Second, script: script, wantSummary: "timed out after 1s", wantStatus: "status: killed after timeout (1s)"},
		{name: "SIGTERM ignored", timeout: 1, grace: 200 * time.Millisecond, script: `trap '' TERM; ` + script, wantSummary: "timed out after 1s", wantStatus: "status: killed after timeout (1s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, ws := approvedBash(t)
			tool.killGrace = tc.grace
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pidsFile := filepath.Join(ws.Root, "pids")
			done := make(chan tools.Result, 1)
			start := time.Now()
			go func() {
				done <- toolstest.Invoke(t, ctx, tool, toolstest.Main, map[string]any{"command": tc.script, "timeout": tc.timeout})
			}()
			var pids []int
			require.Eventually(t, func() bool {
				b, _ := os.ReadFile(pidsFile)
				pids = pids[:0]
				for _, f := range strings.Fields(string(b)) {
					n, err := strconv.Atoi(f)
					if err == nil {
						pids = append(pids, n)
					}
				}
				return len(pids) == 2
			}, 5*time.Second, 10*time.Millisecond)
			for _, pid := range pids {
				require.True(t, toolstest.Alive(pid), "pid %d runs before the kill", pid)
			}
			if tc.cancel {
				cancel()
			}
			var res tools.Result
			select {
			case res = <-done:
			case <-time.After(time.Duration(tc.timeout)*time.Second + 5*time.Second):
				t.Fatal("bash_exec did not return")
			}
			assert.Less(t, time.Since(start), time.Duration(tc.timeout)*time.Second+tc.grace+2*time.Second)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Summary, tc.wantSummary)
			assert.Contains(t, res.Content, tc.wantStatus)
			assert.Contains(t, res.Content, "started\n", "output before the kill is kept")
			i := strings.Index(res.Content, "\noutput (")
			require.GreaterOrEqual(t, i, 0, res.Content)
			assert.Equal(t, "\noutput (stdout and stderr interleaved, 8 bytes):\nstarted\n", res.Content[i:], "nothing after the kill")
			for _, pid := range pids {
				assert.False(t, toolstest.Alive(pid), "pid %d is still running", pid)
			}
			assert.False(t, processGroupRunning(pids[0]), "the process group is gone")
		})
	}
}

func TestBashExecStopsBackgroundProcesses(t *testing.T) {
	toolstest.RequireProcFS(t)
	tool, ws := approvedBash(t)
	start := time.Now()
	res := runBash(t, tool, `sleep 30 > /dev/null 2>&1 & echo $! > bg; echo left`)
	require.False(t, res.IsError, res.Content)
	assert.Less(t, time.Since(start), 5*time.Second)
	pid, err := strconv.Atoi(strings.TrimSpace(toolstest.ReadFile(t, ws, "bg")))
	require.NoError(t, err)
	assert.False(t, toolstest.Alive(pid), "a background process does not outlive the command")
	assert.Contains(t, res.Content, "note: processes the command left running in the background were stopped")
}

// untilEscaped waits, in the command, for the escaped process's pid file.
const untilEscaped = `while [ ! -e escaped ]; do sleep 0.01; done; `

// A process that leaves the command's session (setsid, or a daemon's double
// fork) comes back to the host, its child subreaper, and is killed when the
// command ends; the result says so.
func TestBashExecKillsEscapedProcesses(t *testing.T) {
	toolstest.RequireProcFS(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	for _, tc := range []struct{ name, command string }{
		// The command ends once the escaped process has written its pid.
		{"setsid", `setsid sh -c 'echo $$ > escaped.tmp; mv escaped.tmp escaped; exec sleep 30' & ` + untilEscaped + `echo main done`},
		{"setsid double fork, output closed", `(setsid sh -c 'echo $$ > escaped.tmp; mv escaped.tmp escaped; trap "" TERM; exec sleep 30' > /dev/null 2>&1 &); ` + untilEscaped + `echo main done`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, ws := approvedBash(t)
			start := time.Now()
			res := runBash(t, tool, tc.command)
			pid, err := strconv.Atoi(strings.TrimSpace(toolstest.ReadFile(t, ws, "escaped")))
			require.NoError(t, err)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			require.False(t, res.IsError, res.Content)
			assert.Less(t, time.Since(start), 3*time.Second)
			assert.False(t, toolstest.Alive(pid), "the escaped process still runs")
			assert.Contains(t, res.Content, "was still running and was killed")
			assert.Contains(t, res.Content, "main done\n")
		})
	}
}

// When the host exits (Neovim quit or was killed), KillProcesses ends every
// process a running command started, at once: the group, a process ignoring
// SIGTERM, and one that escaped with setsid.
func TestBashExecKillProcessesAtExit(t *testing.T) {
	toolstest.RequireProcFS(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	tool, ws := approvedBash(t)
	done := make(chan tools.Result, 1)
	go func() {
		done <- runBash(t, tool, `trap "" TERM; sleep 30 & echo $! > bg; setsid sh -c 'echo $$ > escaped; exec sleep 30' & echo $$ > main; wait`)
	}()
	var pids []int
	require.Eventually(t, func() bool {
		pids = pids[:0]
		for _, f := range []string{"bg", "escaped", "main"} {
			b, err := os.ReadFile(filepath.Join(ws.Root, f))
			n, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || err2 != nil {
				return false
			}
			pids = append(pids, n)
		}
		return true
	}, 5*time.Second, 10*time.Millisecond)
	for _, pid := range pids {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	start := time.Now()
	assert.GreaterOrEqual(t, KillProcesses(), 1)
	assert.Less(t, time.Since(start), time.Second)
	for _, pid := range pids {
		assert.False(t, toolstest.Alive(pid), "pid %d still runs", pid)
	}
	select {
	case res := <-done:
		assert.True(t, res.IsError)
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not return")
	}
}
