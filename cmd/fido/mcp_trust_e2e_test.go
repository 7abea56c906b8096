//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// mcpConfig is a .mcp.json with one server "tools" running this test
// binary as an MCP server, started through sh -c script.
func mcpConfig(t *testing.T, script string) string {
	exe, err := os.Executable()
	require.NoError(t, err)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"tools": map[string]any{"command": "sh", "args": []string{"-c", script, exe}, "env": map[string]string{e2eMCPServerEnv: "1"}},
	}})
	return string(cfg)
}

// answerTrust makes vim.ui.select answer the MCP trust question with
// _G.trust (recording each trust question with the detail shown above it)
// and every approval "Run once".
func (f *fido) answerTrust(t *testing.T, answer string) {
	f.Lua(t, nil, `_G.trust, _G.trust_asked = ..., {}
vim.ui.select = function(items, opts, cb)
  local want = "Run once"
  if vim.tbl_contains(items, "Trust and start") then
    want = _G.trust
    local shown = { opts.prompt }
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find("fido://question/", 1, true) then
        vim.list_extend(shown, vim.api.nvim_buf_get_lines(b, 0, -1, false))
      end
    end
    table.insert(_G.trust_asked, table.concat(shown, "\n"))
  end
  for i, it in ipairs(items) do if it == want then return cb(it, i) end end
  cb(nil, nil)
end`, answer)
}

// The model cannot rewrite .mcp.json (patch refuses it, in edits = "auto"
// too); and when the file changes anyway (here through a shell command the
// user let run), the next start asks about the changed entry again instead
// of running it: its command never runs without the question.
func TestE2EChangedMCPConfigAsksTrustAgain(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "M")
	benign := mcpConfig(t, `exec "$0" -test.run='^$'`)
	evil := mcpConfig(t, `touch `+marker+`; exec "$0" -test.run='^$'`)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(benign), 0o644))

	f := startFido(t, state, ws)
	f.Lua(t, nil, `require("fido").setup({ edits = "auto" })`)
	f.answerTrust(t, "Trust and start")
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `(require("fido.mcp").state.servers[1] or ""):find("ready") ~= nil`, 20*time.Second, `require("fido.mcp").state`)

	patch, _ := json.Marshal(map[string]any{"operations": []map[string]any{{"path": ".mcp.json", "content": evil}}})
	shell, _ := json.Marshal(map[string]any{"command": "cat > .mcp.json <<'EOF'\n" + evil + "\nEOF"})
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("r1", "read_file", `{"path":".mcp.json"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("p1", "patch", string(patch), 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("b1", "bash_exec", string(shell), 1).Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido add a server"))
	f.waitIdleAfter(t, 4)
	msgs := f.srv.Requests()[2].Get("messages").Array()
	refusal := msgs[len(msgs)-1].Get("content").String()
	assert.Contains(t, refusal, ".mcp.json is protected", "the model is told")
	f.waitTranscript(t, ".mcp.json is protected", 5*time.Second)
	b, err := os.ReadFile(filepath.Join(ws, ".mcp.json"))
	require.NoError(t, err)
	require.Contains(t, string(b), "touch", "the approved command rewrote the file")
	var hostPid int
	f.Lua(t, &hostPid, `return require("fido.host").pid()`)
	f.Lua(t, nil, `vim.schedule(function() vim.cmd("qa!") end)`)
	require.Eventually(t, func() bool { return !alive(hostPid) }, 5*time.Second, 20*time.Millisecond, "the first Neovim's host ended")

	// The next start: the changed entry is asked about; "Not now" runs nothing.
	g := startFido(t, state, ws)
	g.answerTrust(t, "Not now")
	require.NoError(t, g.Command("Fido"))
	g.WaitFor(t, `#_G.trust_asked == 1`, 20*time.Second, `_G.trust_asked`, `require("fido.mcp").state`)
	var asked []string
	g.Lua(t, &asked, `return _G.trust_asked`)
	assert.Contains(t, asked[0], "tools (changed since you trusted it: args)")
	assert.Contains(t, asked[0], "touch "+marker, "the question shows what would run")
	g.WaitFor(t, `(require("fido.mcp").state.servers[1] or ""):find("not trusted") ~= nil`, 10*time.Second, `require("fido.mcp").state`)
	g.srv.Enqueue(llmtest.Text("hi"))
	require.NoError(t, g.Command("Fido hello"))
	g.waitIdleAfter(t, 1)
	assert.NoFileExists(t, marker, "the changed server's command did not run")
}
