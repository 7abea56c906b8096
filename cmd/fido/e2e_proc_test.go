//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// approveAll makes vim.ui.select pick "Run once".
func (f *fido) approveAll(t *testing.T) {
	scriptQuestions(t, f.Nvim)
	f.Lua(t, nil, `vim.ui.select = function(items, opts, cb)
  for i, it in ipairs(items) do if it == "Run once" then return cb(it, i) end end
  cb(nil, nil)
end`)
}

// Quitting Neovim (:qa!) or killing it (kill -9) while bash_exec runs ends
// the whole command tree within a second: the group, a process ignoring
// SIGTERM, and one that escaped with setsid.
func TestE2ENeovimExitEndsCommandTree(t *testing.T) {
	for _, how := range []string{"qa!", "kill -9"} {
		t.Run(how, func(t *testing.T) {
			f := startFido(t, "")
			f.approveAll(t)
			cmd := `trap "" TERM; sleep 60 & echo $! > bg; setsid sh -c 'echo $$ > escaped; trap "" TERM; exec sleep 60' & echo $$ > main; wait`
			args := `{"command":` + strconv.Quote(cmd) + `}`
			f.srv.Enqueue(llmtest.Reply().ToolCall("call_q", "bash_exec", args, 1).Finish("tool_calls"))
			require.NoError(t, f.Command("Fido start the server"))
			var pids []int
			require.Eventually(t, func() bool {
				pids = pids[:0]
				for _, name := range []string{"bg", "escaped", "main"} {
					b, err := os.ReadFile(filepath.Join(f.Dir, name))
					n, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
					if err != nil || err2 != nil {
						return false
					}
					pids = append(pids, n)
				}
				return true
			}, 10*time.Second, 20*time.Millisecond, "the command started")
			for _, pid := range pids {
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			}
			var hostPid, nvimPid int
			f.Lua(t, &hostPid, `return require("fido.host").pid()`)
			f.Lua(t, &nvimPid, `return vim.fn.getpid()`)
			require.NotZero(t, hostPid)
			pids = append(pids, hostPid)

			start := time.Now()
			if how == "qa!" {
				// Scheduled, so the RPC call returns before Neovim quits.
				f.Lua(t, nil, `vim.schedule(function() vim.cmd("qa!") end)`)
			} else {
				require.NoError(t, syscall.Kill(nvimPid, syscall.SIGKILL))
			}
			left := func() []int {
				var l []int
				for _, pid := range pids {
					if alive(pid) {
						l = append(l, pid)
					}
				}
				return l
			}
			for len(left()) > 0 && time.Since(start) < 3*time.Second {
				time.Sleep(10 * time.Millisecond)
			}
			took := time.Since(start)
			assert.Empty(t, left(), "processes left after %s (bg, escaped, main, host)", how)
			assert.Less(t, took, 1500*time.Millisecond, "gone within about a second")
			t.Logf("%s: all gone after %s", how, took.Round(time.Millisecond))
		})
	}
}

// An approved command cannot read the key from the host's /proc entry (the
// host is non-dumpable and dropped it from its environment), and whatever a
// command prints, the key never reaches the model, the transcript or a
// snapshot. The key here comes from api_key_cmd, never from a variable.
func TestE2EKeyStaysOutOfCommands(t *testing.T) {
	const key = "sk-or-v1-from-pass-0123456789abcdef"
	srv := llmtest.NewServer(t)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL(), "FIDO_MODEL=test/model"}})
	f := &fido{Nvim: n, srv: srv}
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "secret.txt"), []byte(key+"\n"), 0o600))
	n.Lua(t, nil, `local secret, log = ...
require("fido").setup({ api_key_cmd = { "cat", secret }, log_file = log })`,
		filepath.Join(n.Dir, "secret.txt"), filepath.Join(n.Tmp, "fido.log"))
	f.approveAll(t)
	cmd := `cat /proc/$PPID/environ > /dev/null && echo READABLE; tr '\0' '\n' < /proc/$PPID/environ | grep -c API_KEY; env | grep -c API_KEY; cat secret.txt`
	srv.Enqueue(
		llmtest.Reply().ToolCall("call_k", "bash_exec", `{"command":`+strconv.Quote(cmd)+`}`, 1).Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido look around"))
	f.waitIdleAfter(t, 2)
	require.NoError(t, f.Command("Fido /suspend key check"))
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("suspended", 1, true) ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)

	require.Equal(t, "Bearer "+key, srv.Requests()[0].Header.Get("Authorization"), "the key from api_key_cmd is used")
	msgs := srv.Requests()[1].Get("messages").Array()
	out := msgs[len(msgs)-1].Get("content").String()
	if os.Geteuid() != 0 { // root reads any /proc entry: there only the redaction guards
		assert.NotContains(t, out, "READABLE", "the host's /proc environ is closed to commands")
	}
	assert.Contains(t, out, "[redacted]", "the key printed by the command is redacted")
	assert.NotContains(t, out, key)
	assert.NotContains(t, f.transcript(t), key)
	require.NoError(t, filepath.Walk(n.Tmp, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || p == filepath.Join(n.Dir, "secret.txt") || strings.HasSuffix(p, "nvim.sock") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			assert.NotContains(t, string(b), key, "key found in %s", p)
		}
		return nil
	}))
}
