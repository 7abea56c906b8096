package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// roles lists a request's messages as "role:content" (tool calls by name),
// what a strict comparison of two histories needs.
func roles(r llmtest.Request) []string {
	var out []string
	r.Get("messages").ForEach(func(_, m gjson.Result) bool {
		s := m.Get("role").String() + ":" + m.Get("content").String()
		m.Get("tool_calls").ForEach(func(_, c gjson.Result) bool {
			s += " call " + c.Get("id").String() + " " + c.Get("function.name").String()
			return true
		})
		if id := m.Get("tool_call_id").String(); id != "" {
			s += " answers " + id
		}
		out = append(out, s)
		return true
	})
	return out
}

// A conversation is saved as it happens: quitting Neovim and starting it
// again on the workspace resumes it — the transcript shows it and the next
// request carries it whole, plus the new message.
func TestE2EConversationResumedAfterRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("alpha\n"), 0o644))
	f1 := startFido(t, state, ws)
	f1.srv.Enqueue(
		llmtest.Text("first answer"),
		llmtest.Reply().ToolCall("call_r", "read_file", `{"path":"notes.txt"}`, 1).Finish("tool_calls"),
		llmtest.Text("it says alpha"),
		llmtest.Text("third answer"),
	)
	for i, q := range []string{"first question", "what is in notes.txt?", "third question"} {
		require.NoError(t, f1.Command("Fido "+q))
		f1.waitIdleAfter(t, []int{1, 3, 4}[i])
	}
	last := f1.srv.Requests()[3]
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))

	f2 := startFido(t, state, ws)
	require.NoError(t, f2.Command("Fido"))
	f2.WaitFor(t, `vim.fn.join(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("third answer", 1, true) ~= nil`,
		10*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	text := f2.transcript(t)
	assert.Contains(t, text, "first question")
	assert.Contains(t, text, "read_file")
	assert.Contains(t, text, "resumed")

	f2.srv.Enqueue(llmtest.Text("fourth answer"))
	require.NoError(t, f2.Command("Fido fourth question"))
	f2.waitIdleAfter(t, 1)
	next := f2.srv.Requests()[0]
	want := append(roles(last), "assistant:third answer", "user:fourth question")
	assert.Equal(t, want, roles(next))
	assert.Equal(t, last.Get("messages.0").Raw, next.Get("messages.0").Raw, "the same system message")
}

// kill -9 of the host while a tool runs loses nothing saved: after the
// restart the interrupted call is answered (truthfully: it had started) and
// the next request is valid.
func TestE2EConversationSurvivesHostKill(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	f1 := startFido(t, state, ws)
	f1.srv.Enqueue(llmtest.Reply().ToolCall("call_js", "javascript_execute", `{"code":"while(true){}","timeout":20000}`, 2).Finish("tool_calls"))
	require.NoError(t, f1.Command("Fido spin"))
	f1.waitTranscript(t, "javascript_execute", 10*time.Second)
	var pid int
	f1.Lua(t, &pid, `return vim.fn.jobpid(require("fido.host").chan())`)
	require.Greater(t, pid, 0)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	// SIGKILL lands when the host leaves the kernel (an fsync on a busy
	// disk can hold it there): until it is gone its lock keeps the
	// conversation, and a new Fido would rightly start another one.
	require.Eventually(t, func() bool { return !alive(pid) }, 20*time.Second, 20*time.Millisecond, "the killed host is still there")

	f2 := startFido(t, state, ws)
	f2.srv.Enqueue(llmtest.Text("recovered"))
	require.NoError(t, f2.Command("Fido go on"))
	f2.waitIdleAfter(t, 1)
	r := f2.srv.Requests()[0]
	got := roles(r)
	require.GreaterOrEqual(t, len(got), 4, "the conversation was not resumed: %v\n%s", got, f2.transcript(t))
	assert.Equal(t, "user:spin", got[1])
	assert.Contains(t, got[2], "call call_js javascript_execute")
	assert.Contains(t, got[3], "while this tool was running")
	assert.Contains(t, got[3], "answers call_js")
	assert.Equal(t, "user:go on", got[len(got)-1])
}

// waitRequests waits until the fake provider saw n requests and Fido is idle.
func (f *fido) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(f.srv.Requests()) < n {
		require.True(t, time.Now().Before(deadline), "waiting for request %d", n)
		time.Sleep(20 * time.Millisecond)
	}
	// The status reaches Lua in coalesced flushes (~30 ms): let the busy
	// state of the turn that made the request arrive first, so the idle seen
	// below is that turn's end and not the previous one's.
	time.Sleep(150 * time.Millisecond)
	f.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
}

// /new, /rename, /sessions (the older one picked), /fork and
// :FidoSessions delete.
func TestE2EConversationCommands(t *testing.T) {
	f := startFido(t, "")
	f.Lua(t, nil, `_G.picks = {}
vim.ui.select = function(items, opts, cb)
  table.insert(_G.picks, { prompt = opts.prompt, items = items })
  local want = _G.want_pick
  for i, it in ipairs(items) do
    if type(want) == "string" and it:find(want, 1, true) then return cb(it, i) end
  end
  cb(nil, nil)
end`)
	f.srv.Enqueue(llmtest.Text("A1"), llmtest.Text("B1"), llmtest.Text("A2"), llmtest.Text("F1"))
	require.NoError(t, f.Command("Fido topic A"))
	f.waitRequests(t, 1)
	require.NoError(t, f.Command("Fido /rename Alpha work"))
	require.NoError(t, f.Command("Fido /new"))
	require.NoError(t, f.Command("Fido topic B"))
	f.waitRequests(t, 2)
	reqB := f.srv.Requests()[1]
	assert.NotContains(t, reqB.Body, []byte("topic A"), "a new conversation starts empty")

	f.Lua(t, nil, `_G.want_pick = "Alpha work"`)
	require.NoError(t, f.Command("Fido /sessions"))
	f.waitTranscript(t, "resumed \"Alpha work\"", 5*time.Second)
	var labels []string
	f.Lua(t, &labels, `return _G.picks[1].items`)
	require.Len(t, labels, 2)
	assert.Contains(t, labels[0], "topic B", "newest first")
	assert.Contains(t, labels[1], "Alpha work")
	require.NoError(t, f.Command("Fido more on A"))
	f.waitRequests(t, 3)
	reqA := roles(f.srv.Requests()[2])
	assert.Contains(t, reqA, "user:topic A")
	assert.NotContains(t, strings.Join(reqA, "\n"), "topic B")

	require.NoError(t, f.Command("Fido /fork"))
	require.NoError(t, f.Command("Fido in the fork"))
	f.waitRequests(t, 4)
	assert.Contains(t, roles(f.srv.Requests()[3]), "user:more on A", "the fork carries the conversation")

	dir := filepath.Join(f.StateDir, "workspaces")
	count := func() int {
		n := 0
		_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error {
			if strings.HasSuffix(p, ".jsonl") {
				n++
			}
			return nil
		})
		return n
	}
	require.Equal(t, 3, count())
	f.Lua(t, nil, `_G.picks = {}; _G.want_pick = "topic B"`)
	f.Lua(t, nil, `local orig = vim.ui.select
vim.ui.select = function(items, opts, cb)
  if opts.prompt:find("for good", 1, true) then return cb("Delete", 2) end
  return orig(items, opts, cb)
end`)
	require.NoError(t, f.Command("FidoSessions delete"))
	f.waitTranscript(t, "deleted \"topic B\"", 5*time.Second)
	assert.Equal(t, 2, count())
}

// A message sent while a turn streams is queued and arrives as the next
// user message the moment the turn ends.
func TestE2EMessageQueuedWhileWorking(t *testing.T) {
	f := startFido(t, "")
	f.srv.Enqueue(
		llmtest.Reply().Content("slow ").Pause(1500*time.Millisecond).Content("answer").Finish("stop"),
		llmtest.Text("second answer"),
	)
	require.NoError(t, f.Command("Fido first"))
	f.WaitFor(t, `require("fido").status().state ~= "idle"`, 5*time.Second)
	require.NoError(t, f.Command("Fido also this"))
	f.waitTranscript(t, "queued (1): also this", 5*time.Second)
	require.NoError(t, f.Command("Fido and then that"))
	f.waitTranscript(t, "queued (2): and then that", 5*time.Second)
	f.waitIdleAfter(t, 2)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2, "the queued messages go out together, as one request")
	got := roles(reqs[1])
	assert.Equal(t, []string{"user:first", "assistant:slow answer", "user:also this\n\nand then that"}, got[1:])

	// The context gauge: status().context and `ctx N%` in the statusline.
	f.WaitFor(t, `require("fido").status().context.limit > 0 and require("fido").status().context.used > 0`, 5*time.Second, `require("fido").status()`)
	var line string
	f.Lua(t, &line, `return require("fido").statusline(160)`)
	assert.Regexp(t, `ctx \d+%`, line)
}

// Two Neovims on one workspace each write only their own conversation: the
// second finds the newest one open in the first and starts its own; neither
// file holds the other's messages, and no file holds the API key.
func TestE2ETwoNeovimsKeepTheirOwnConversations(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	const key = "sk-or-v1-conversation-secret-0123456789"
	f1 := startFido(t, state, ws)
	f1.Lua(t, nil, `vim.env.OPENROUTER_API_KEY = ...`, key)
	f1.srv.Enqueue(llmtest.Text("one says " + key))
	require.NoError(t, f1.Command("Fido from the first Neovim"))
	f1.waitIdleAfter(t, 1)

	f2 := startFido(t, state, ws)
	f2.Lua(t, nil, `vim.env.OPENROUTER_API_KEY = ...`, key)
	require.NoError(t, f2.Command("Fido"))
	f2.WaitFor(t, `vim.fn.join(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("open in another Fido", 1, true) ~= nil`, 10*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	f2.srv.Enqueue(llmtest.Text("two"))
	require.NoError(t, f2.Command("Fido from the second Neovim"))
	f2.waitIdleAfter(t, 1)
	f1.srv.Enqueue(llmtest.Text("one again"))
	require.NoError(t, f1.Command("Fido the first goes on"))
	f1.waitIdleAfter(t, 2)

	assert.NotContains(t, string(f2.srv.Requests()[0].Body), "from the first Neovim")
	assert.Contains(t, string(f1.srv.Requests()[1].Body), "from the first Neovim")
	assert.NotContains(t, string(f1.srv.Requests()[1].Body), "from the second Neovim")
	var files []string
	require.NoError(t, filepath.Walk(state, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	}))
	require.Len(t, files, 2)
	var first, second int
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.NotContains(t, string(b), key, "the key never reaches a conversation file")
		if strings.Contains(string(b), "from the first Neovim") {
			first++
			assert.NotContains(t, string(b), "from the second Neovim")
		}
		if strings.Contains(string(b), "from the second Neovim") {
			second++
		}
	}
	assert.Equal(t, 1, first)
	assert.Equal(t, 1, second)
}
