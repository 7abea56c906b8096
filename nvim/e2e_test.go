package nvim

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// startFido starts Neovim with the real fido binary against a fake provider.
func startFido(t *testing.T) (*nvimtest.Nvim, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{
		"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=test-key", "FIDO_MODEL=test/model",
	}})
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "main.go"),
		[]byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644))
	// Record notifications instead of printing them.
	n.Lua(t, nil, `_G.fido_notes = {}
vim.notify = function(msg, level) table.insert(_G.fido_notes, { msg = msg, level = level }) end`)
	return n, srv
}

func transcriptText(t *testing.T, n *nvimtest.Nvim) string {
	return strings.Join(n.Lines(t, "fido://transcript"), "\n")
}

func TestE2EExplainStreamsReasoningAndAnswer(t *testing.T) {
	n, srv := startFido(t)
	srv.Enqueue(llmtest.Reply().Reasoning("The user wants ").Reasoning("an explanation.").
		Content("It prints ").Content("hello.").Usage(1200, 34, 1000, 0.0123).Finish("stop"))
	// setup() options reach the host's environment (they win over the inherited one).
	require.True(t, n.Bool(t, `require("fido").setup({ model = "setup/model", reasoning = "low" })`))
	require.NoError(t, n.Command("Fido explain main.go"))
	n.WaitFor(t, `require("fido").status().usage.calls == 1 and require("fido").status().state == "idle"`, 10*time.Second,
		`require("fido").status()`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	lines := n.Lines(t, "fido://transcript")
	assert.Contains(t, lines, "## You")
	assert.Contains(t, lines, "explain main.go")
	assert.Contains(t, lines, "The user wants an explanation.")
	assert.Contains(t, lines, "It prints hello.")

	var st struct {
		State string      `msgpack:"state"`
		Model string      `msgpack:"model"`
		Usage UsageStatus `msgpack:"usage"`
	}
	n.Lua(t, &st, `return require("fido").status()`)
	assert.Equal(t, "idle", st.State)
	assert.Equal(t, "setup/model", st.Model)
	assert.Equal(t, UsageStatus{Calls: 1, Input: 1200, Output: 34, CacheRead: 1000, Cost: 0.0123}, st.Usage)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Contains(t, string(reqs[0].Body), "explain main.go")
}

func TestE2EToolCallLine(t *testing.T) {
	n, srv := startFido(t)
	srv.Enqueue(
		llmtest.Reply().ToolCall("call_1", "read_file", `{"path":"main.go"}`, 3).Finish("tool_calls"),
		llmtest.Text("Done."),
	)
	require.NoError(t, n.Command("Fido read main.go"))
	n.WaitFor(t, `vim.tbl_contains(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "Done.")`,
		10*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	var toolLine string
	for _, l := range n.Lines(t, "fido://transcript") {
		if strings.HasPrefix(l, "● read_file") {
			toolLine = l
		}
	}
	assert.Contains(t, toolLine, "main.go")
	assert.Contains(t, toolLine, "… ✓")
}

func TestE2EUnauthorizedIsOneErrorLine(t *testing.T) {
	n, srv := startFido(t)
	srv.Enqueue(llmtest.Status(401).Message("No auth credentials found"))
	require.NoError(t, n.Command("Fido hi"))
	n.WaitFor(t, `(function()
  local b = vim.fn.bufnr("fido://transcript")
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, require("fido.bridge").ns, 0, -1, { details = true })) do
    if m[4].hl_group == "FidoError" then return true end
  end
end)()`, 10*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	assert.Contains(t, transcriptText(t, n), "401")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second, `require("fido").status()`)
}

func TestE2ECancelRestoresDraft(t *testing.T) {
	n, srv := startFido(t)
	srv.Enqueue(llmtest.Reply().Reasoning("thinking").Stall())
	require.NoError(t, n.Command("Fido"))
	n.Lua(t, nil, `vim.api.nvim_buf_set_lines(vim.fn.bufnr("fido://input"), 0, -1, false, { "long question" })
require("fido.layout").submit_input()`)
	n.WaitFor(t, `vim.tbl_contains(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "thinking")`,
		10*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	require.NoError(t, n.Command("FidoCancel"))
	n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second, `require("fido").status()`)
	n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "long question"`, 5*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
}

func TestE2EDeadHostIsRestartedWithNotice(t *testing.T) {
	n, srv := startFido(t)
	srv.SetDefault(llmtest.Text("ok"))
	require.NoError(t, n.Command("Fido first"))
	n.WaitFor(t, `require("fido.host").ready()`, 10*time.Second)
	_, err := srv.WaitRequests(1, 10*time.Second)
	require.NoError(t, err)
	var pid int
	n.Lua(t, &pid, `return require("fido.host").pid()`)
	require.Positive(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	n.WaitFor(t, `require("fido.host").died() ~= nil`, 5*time.Second)
	assert.True(t, n.Bool(t, `require("fido").status().state == "idle"`), "a dead host's turn is over")

	require.NoError(t, n.Command("Fido second"))
	n.WaitFor(t, `require("fido.host").ready()`, 10*time.Second)
	var notes []map[string]any
	n.Lua(t, &notes, `return _G.fido_notes`)
	require.NotEmpty(t, notes)
	msg, _ := notes[0]["msg"].(string)
	assert.Contains(t, msg, "exited unexpectedly")
	assert.Contains(t, msg, "code 137")
	assert.Contains(t, msg, "fido.log")
	var newPid int
	n.Lua(t, &newPid, `return require("fido.host").pid()`)
	assert.NotEqual(t, pid, newPid)
	_, err = srv.WaitRequests(2, 10*time.Second)
	assert.NoError(t, err, "the second prompt reached the restarted host")
}

func TestE2ECheckhealth(t *testing.T) {
	n, _ := startFido(t)
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "AGENTS.md"), []byte("rules\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(n.Dir, ".fido", "commands"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, ".fido", "commands", "help.md"), []byte("mine\n"), 0o644))
	require.NoError(t, n.Command("checkhealth fido"))
	var out string
	n.Lua(t, &out, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	assert.Contains(t, out, "found "+nvimtest.FidoBinary(t))
	assert.Contains(t, out, "instruction files in the system message: AGENTS.md")
	assert.Contains(t, out, "your command /help (")
	assert.Contains(t, out, "fido ")
	assert.Contains(t, out, "OPENROUTER_API_KEY is set")
	assert.NotContains(t, out, "test-key", "never the key's value")
	assert.Contains(t, out, "winbar")
	assert.Contains(t, out, "vim.ui.select")
	assert.Contains(t, out, "rg")
	assert.NotContains(t, out, "ERROR")
	// The LSP floor (0.8) is stated where it is not met.
	if n.Bool(t, `vim.fn.has("nvim-0.8") == 1`) {
		assert.Contains(t, out, "diagnostics after edits: on (wait up to 2000 ms)")
	} else {
		assert.Contains(t, out, "need Neovim 0.8 or later")
	}
}
