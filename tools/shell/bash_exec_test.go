package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// approvedBash is a bash_exec whose user approves every command ("Run once").
func approvedBash(t testing.TB) (*BashTool, *workspace.Workspace) {
	t.Helper()
	ws, _ := toolstest.Workspace(t, nil)
	return NewBashTool(ws, &toolstest.Prompter{Every: BashRunOnce}), ws
}

func runBash(t testing.TB, tool *BashTool, command string) tools.Result {
	t.Helper()
	return toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": command, "timeout": 10})
}

func TestBashExecApproval(t *testing.T) {
	for _, tc := range []struct {
		name        string
		choose      []int
		typed       []toolstest.Input
		promptErr   error
		calls       int
		wantPrompts int
		wantRun     bool
		wantSummary string
		wantContent string
	}{
		{name: "run once asks every time", choose: []int{2, 2, 2}, calls: 3, wantPrompts: 3, wantRun: true, wantSummary: "exit 0"},
		{name: "always for the prefix stops asking", choose: []int{3}, typed: []toolstest.Input{{Text: "echo", OK: true}}, calls: 3, wantPrompts: 1, wantRun: true, wantSummary: "exit 0"},
		{name: "deny runs nothing", choose: []int{0, 0}, calls: 2, wantPrompts: 2, wantSummary: "denied by the user", wantContent: "the user denied running this command; nothing was run"},
		{name: "deny with reason tells the model", choose: []int{1}, typed: []toolstest.Input{{Text: "use make instead", OK: true}}, calls: 1, wantPrompts: 1, wantSummary: "denied: use make instead", wantContent: "saying: use make instead"},
		{name: "dismissal runs nothing", choose: []int{-1}, calls: 1, wantPrompts: 1, wantSummary: "not approved (prompt dismissed)", wantContent: "dismissed the approval prompt"},
		{name: "prompt failure runs nothing", promptErr: errors.New("no editor connection"), calls: 1, wantPrompts: 1, wantSummary: "could not ask the user for approval: no editor connection", wantContent: "nothing was run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, _ := toolstest.Workspace(t, nil)
			fp := &toolstest.Prompter{Choose: tc.choose, Typed: tc.typed, Err: tc.promptErr}
			tool := NewBashTool(ws, fp)
			for i := range tc.calls {
				cmd := fmt.Sprintf("echo run >> marker; echo call %d", i)
				res := toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": cmd})
				assert.Contains(t, res.Summary, tc.wantSummary)
				assert.Contains(t, res.Content, tc.wantContent)
				if tc.wantRun {
					require.False(t, res.IsError, res.Content)
					assert.Contains(t, res.Content, fmt.Sprintf("call %d\n", i))
				} else {
					assert.True(t, res.IsError)
					assert.NotContains(t, res.Content, "call ")
				}
			}
			require.Len(t, fp.Selects, tc.wantPrompts)
			for _, s := range fp.Selects {
				assert.Equal(t, []string{"Deny", "Deny with reason…", "Run once", "Always this session: echo", "Always in this workspace: echo"}, s.Items)
				assert.True(t, strings.HasPrefix(s.Prompt, "Run in "+ws.Root+"?\n$ echo run >> marker; echo call "), s.Prompt)
			}
			if tc.wantRun {
				assert.Equal(t, strings.Repeat("run\n", tc.calls), toolstest.ReadFile(t, ws, "marker"))
			} else {
				assert.NoFileExists(t, filepath.Join(ws.Root, "marker"))
			}
		})
	}
}

// A session rule lives as long as the tool's rules; a workspace rule is
// saved and read by the next session; a chain with an unmatched command
// still asks; a deny rule refuses without asking.
func TestBashExecRules(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	path := filepath.Join(t.TempDir(), "permissions.json")
	config := []permission.Rule{{Effect: permission.Deny, Command: "git push"}}
	rules, notice := permission.OpenStore(path, config)
	require.Empty(t, notice)
	fp := &toolstest.Prompter{Choose: []int{4}, Typed: []toolstest.Input{{Text: "true", OK: true}}}
	tool := NewBashTool(ws, fp).WithPermissions(rules)
	require.False(t, toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": "true --x"}).IsError)

	again, _ := permission.OpenStore(path, config)
	fp2 := &toolstest.Prompter{Choose: []int{0}}
	tool2 := NewBashTool(ws, fp2).WithPermissions(again)
	res := toolstest.Invoke(t, context.Background(), tool2, toolstest.Main, map[string]any{"command": "true && true"})
	require.False(t, res.IsError, res.Content)
	assert.Zero(t, fp2.SelectCount(), "the workspace rule holds after a restart")

	res = toolstest.Invoke(t, context.Background(), tool2, toolstest.Main, map[string]any{"command": "true && touch marker"})
	assert.Equal(t, "denied by the user", res.Summary, "a chain with an unmatched command asks")
	assert.Equal(t, 1, fp2.SelectCount())
	assert.NoFileExists(t, filepath.Join(ws.Root, "marker"))

	res = toolstest.Invoke(t, context.Background(), tool2, toolstest.Main, map[string]any{"command": "git push origin main"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, `refused by the user's rule \"deny git push\" (config)`)
	assert.Equal(t, 1, fp2.SelectCount(), "a deny rule refuses without asking")

	removed, err := again.Keep(nil)
	require.NoError(t, err)
	assert.Equal(t, 1, removed)
	third, _ := permission.OpenStore(path, config)
	assert.Len(t, third.All(), 1, "only the config rule is left")
}

func TestBashExecPromptShowsLongCommandsCut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		hidden  int
	}{
		{name: "short", command: "go test ./...", hidden: 0},
		{name: "long line", command: "echo " + strings.Repeat("x", 5000), hidden: 5005 - bashPromptMaxRunes},
		{name: "many lines", command: strings.Repeat("echo line\n", 100), hidden: 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := bashPrompt("/ws", tc.command)
			if tc.hidden == 0 {
				assert.Equal(t, "Run in /ws?\n$ "+tc.command, p)
				return
			}
			assert.Contains(t, p, fmt.Sprintf("[… %d more bytes not shown; approving runs the whole command]", tc.hidden))
			assert.Less(t, len(p), bashPromptMaxRunes+200)
			assert.True(t, strings.HasPrefix(p, "Run in /ws?\n$ echo "))
		})
	}
}

func TestBashExecCancelWhileWaitingForApproval(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	fp := &toolstest.Prompter{Hold: true, Asked: make(chan struct{}, 1)}
	tool := NewBashTool(ws, fp)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() {
		done <- toolstest.Invoke(t, ctx, tool, toolstest.Main, map[string]any{"command": "touch marker"})
	}()
	<-fp.Asked
	cancel()
	select {
	case res := <-done:
		assert.True(t, res.IsError)
		assert.Equal(t, "cancelled while waiting for approval", res.Summary)
		assert.Contains(t, res.Content, "nothing was run")
	case <-time.After(5 * time.Second):
		t.Fatal("bash_exec did not return after cancel")
	}
	assert.NoFileExists(t, filepath.Join(ws.Root, "marker"))
}

func TestBashExecOutput(t *testing.T) {
	tool, ws := approvedBash(t)
	var seq strings.Builder
	for i := 1; i <= 30000; i++ {
		fmt.Fprintf(&seq, "%d\n", i)
	}
	all := seq.String()
	for _, tc := range []struct {
		name        string
		command     string
		wantError   bool
		wantSummary string
		want        []string
		notWant     []string
	}{
		{name: "exit 0", command: "echo hello", wantSummary: "exit 0 · ",
			want: []string{"command: echo hello\n", "status: exit code 0\n", "duration: ", "output (stdout and stderr interleaved, 6 bytes):\nhello\n"}},
		{name: "exit code", command: "echo failing >&2; exit 3", wantError: true, wantSummary: "exit 3 · ",
			want: []string{"status: exit code 3\n", "failing\n"}},
		{name: "no output", command: "true", wantSummary: "exit 0", want: []string{"output: (none)\n"}},
		{name: "signal", command: "kill -9 $$", wantError: true, wantSummary: "killed by SIGKILL · ", want: []string{"status: killed by signal SIGKILL\n"}},
		{name: "stdout and stderr in order", command: "echo one; echo two >&2; echo three; echo four >&2",
			want: []string{"bytes):\none\ntwo\nthree\nfour\n"}},
		{name: "stdin is closed", command: "cat; read -r line; echo read=$?", want: []string{"read=1\n"}},
		{name: "working directory is the root", command: "pwd -P", want: []string{"\n" + ws.Root + "\n"}},
		{name: "multi-line command is one line", command: "echo a\necho b", want: []string{"command: echo a … (+1 lines)\n", "a\nb\n"}},
		{name: "output cap keeps head and tail", command: "seq 1 30000",
			want: []string{
				fmt.Sprintf("output (stdout and stderr interleaved, %d bytes; only the first %d and last %d bytes are shown):\n", len(all), bashHeadBytes, bashTailBytes),
				"):\n1\n2\n3\n",
				all[:bashHeadBytes],
				fmt.Sprintf("\n… %d bytes omitted …\n", len(all)-bashHeadBytes-bashTailBytes),
				all[len(all)-bashTailBytes:],
				"29999\n30000\n",
			},
			notWant: []string{all[bashHeadBytes : bashHeadBytes+100]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res := runBash(t, tool, tc.command)
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Equal(t, tc.wantError, res.IsError, res.Content)
			assert.Contains(t, res.Summary, tc.wantSummary)
			for _, w := range tc.want {
				assert.Contains(t, res.Content, w)
			}
			for _, w := range tc.notWant {
				assert.NotContains(t, res.Content, w)
			}
			assert.Less(t, len(res.Content), bashHeadBytes+bashTailBytes+1024)
		})
	}
}

func TestBashExecEnvironment(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "sk-or-secret-test")
	t.Setenv("TAVILY_API_KEY", "tvly-secret-test")
	t.Setenv("PAGER", "less")
	t.Setenv("FIDO_TEST_KEPT", "kept")
	t.Setenv("CDPATH", os.TempDir()) // `cd sub` would leave the workspace
	tool, _ := approvedBash(t)
	res := runBash(t, tool, "env")
	require.False(t, res.IsError, res.Content)
	for _, absent := range []string{"OPENROUTER_API_KEY", "TAVILY_API_KEY", "secret-test", "PAGER=less", "CDPATH"} {
		assert.NotContains(t, res.Content, absent)
	}
	for _, present := range []string{"\nFIDO_TEST_KEPT=kept\n", "\nTERM=dumb\n", "\nNO_COLOR=1\n", "\nPAGER=cat\n", "\nGIT_PAGER=cat\n", "\nGIT_TERMINAL_PROMPT=0\n"} {
		assert.Contains(t, res.Content, present)
	}
}

func TestBashExecOwnSession(t *testing.T) {
	toolstest.RequireProcFS(t)
	tool, _ := approvedBash(t)
	// Fields 5 and 6 of /proc/PID/stat are the process group and the session.
	res := runBash(t, tool, `read -r -a f < /proc/$$/stat; echo "pid=$$ pgrp=${f[4]} sid=${f[5]}"`)
	require.False(t, res.IsError, res.Content)
	i := strings.LastIndex(res.Content, "pid=")
	require.GreaterOrEqual(t, i, 0, res.Content)
	var pid, pgrp, sid int
	_, err := fmt.Sscanf(res.Content[i:], "pid=%d pgrp=%d sid=%d", &pid, &pgrp, &sid)
	require.NoError(t, err)
	assert.Equal(t, pid, pgrp, "own process group")
	assert.Equal(t, pid, sid, "own session, so no controlling terminal")
}

func TestBashExecRefusals(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	for _, tc := range []struct {
		name     string
		prompter tools.Prompter
		inv      tools.Invocation
		args     string
		want     string
	}{
		{name: "subagent", prompter: &toolstest.Prompter{Choose: []int{0}}, inv: tools.Invocation{DelegationDepth: 1}, args: `{"command": "touch marker"}`, want: "permission_denied: bash_exec is not available to a subagent"},
		{name: "subagent role", prompter: &toolstest.Prompter{Choose: []int{0}}, inv: tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent}}, args: `{"command": "touch marker"}`, want: "permission_denied"},
		{name: "no prompter", inv: toolstest.Main, args: `{"command": "touch marker"}`, want: "bash_exec needs an editor to ask for approval"},
		{name: "empty command", prompter: &toolstest.Prompter{Choose: []int{0}}, inv: toolstest.Main, args: `{"command": "  "}`, want: "command is required"},
		{name: "zero timeout", prompter: &toolstest.Prompter{Choose: []int{0}}, inv: toolstest.Main, args: `{"command": "touch marker", "timeout": 0}`, want: "timeout must be at least 1 second"},
		{name: "unknown argument", prompter: &toolstest.Prompter{Choose: []int{0}}, inv: toolstest.Main, args: `{"command": "touch marker", "cwd": "/"}`, want: `unknown argument "cwd"`},
		{name: "wrong type", prompter: &toolstest.Prompter{Choose: []int{0}}, inv: toolstest.Main, args: `{"command": "touch marker", "timeout": "5"}`, want: `argument "timeout" must be an integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tool *BashTool
			if tc.prompter == nil {
				tool = NewBashTool(ws, nil)
			} else {
				tool = NewBashTool(ws, tc.prompter)
			}
			reg, err := tools.NewRegistry(tool)
			require.NoError(t, err)
			res := reg.Invoke(context.Background(), tc.inv, "bash_exec", json.RawMessage(tc.args))
			assert.True(t, res.IsError)
			assert.Contains(t, res.Summary, tc.want)
			if fp, ok := tc.prompter.(*toolstest.Prompter); ok {
				assert.Zero(t, fp.SelectCount(), "no approval prompt")
			}
			// Run itself refuses subagents too, for a caller that skips the registry.
			if tc.inv.IsSubagent() {
				res, err := tool.Run(context.Background(), tc.inv, json.RawMessage(tc.args))
				require.NoError(t, err)
				assert.Contains(t, res.Summary, "permission_denied")
			}
			assert.NoFileExists(t, filepath.Join(ws.Root, "marker"))
		})
	}
}

func TestBashExecTimeoutAboveMaximum(t *testing.T) {
	tool, _ := approvedBash(t)
	res := toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": "true", "timeout": 900})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "status: exit code 0\n")
	assert.Contains(t, res.Content, "note: the timeout was capped at 600s (the requested 900s is above the maximum)\n")
}

func TestBashExecSummarizeCall(t *testing.T) {
	tool := NewBashTool(nil, nil)
	for args, want := range map[string]string{
		`{"command": "go test ./..."}`:                    "go test ./...",
		`{"command": "  make\n  make test\nls  "}`:        "make … (+2 lines)",
		`{"command": "` + strings.Repeat("a", 100) + `"}`: strings.Repeat("a", 80) + "…",
	} {
		assert.Equal(t, want, tool.SummarizeCall(json.RawMessage(args)), args)
	}
}

func TestBashOutputCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "empty", want: "output: (none)\n"},
		{name: "fits", writes: []string{"ab", "cd", "ef"}, want: "output (stdout and stderr interleaved, 6 bytes):\nabcdef\n"},
		{name: "exactly full", writes: []string{"abcd1234"}, want: "output (stdout and stderr interleaved, 8 bytes):\nabcd1234\n"},
		{name: "cut", writes: []string{"abcd", "XXXXXX", "1", "234"},
			want: "output (stdout and stderr interleaved, 14 bytes; only the first 4 and last 4 bytes are shown):\nabcd\n… 6 bytes omitted …\n1234\n"},
		{name: "cut inside characters", writes: []string{"abc€XX€12"},
			want: "output (stdout and stderr interleaved, 13 bytes; only the first 3 and last 2 bytes are shown):\nabc\n… 8 bytes omitted …\n12\n"},
		{name: "invalid bytes", writes: []string{"a\xffb"}, want: "output (stdout and stderr interleaved, 3 bytes):\na\uFFFDb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &outputCapture{headMax: 4, tailMax: 4}
			for _, w := range tc.writes {
				n, err := h.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			assert.Equal(t, tc.want, h.render())
		})
	}
}

func TestBashShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond:   "0.3s",
		12500 * time.Millisecond: "12.5s",
		125 * time.Second:        "2m05s",
	} {
		assert.Equal(t, want, shortDuration(d))
	}
}
