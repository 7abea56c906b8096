package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/tools/sandbox"
)

// startRules starts Fido with a deny rule in setup() and a picker that
// records every question and picks the item starting with _G.pick.
func startRules(t *testing.T, state, ws string) *fido {
	t.Helper()
	f := startFido(t, state, ws)
	f.Lua(t, nil, `require("fido").setup({ permissions = { deny = { "git push" } } })
_G.asked = {}
_G.pick = "Deny"
vim.ui.select = function(items, opts, cb)
  table.insert(_G.asked, items)
  for i, it in ipairs(items) do
    if it:sub(1, #_G.pick) == _G.pick then return cb(it, i) end
  end
  cb(nil, nil)
end
vim.ui.input = function(opts, cb) cb(opts.default) end`)
	return f
}

func (f *fido) bashTurn(t *testing.T, id, command string) {
	t.Helper()
	before := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().ToolCall(id, "bash_exec", `{"command":`+quoteJSON(command)+`}`, 1).Finish("tool_calls"),
		llmtest.Text("ok"),
	)
	require.NoError(t, f.Command("Fido run "+id))
	f.waitRequests(t, before+2)
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func (f *fido) askedCount(t *testing.T) int {
	var n int
	f.Lua(t, &n, `return #_G.asked`)
	return n
}

// "Always in this workspace: go test" holds after a restart; a chain with
// another command asks; a deny rule refuses without asking; removing the
// rule in /permissions makes Fido ask again.
func TestE2EWorkspaceRulesAndDeny(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	f1 := startRules(t, state, ws)
	f1.Lua(t, nil, `_G.pick = "Always in this workspace: "`)
	f1.bashTurn(t, "c1", "go test ./... -run X")
	require.Equal(t, 1, f1.askedCount(t))
	var items []string
	f1.Lua(t, &items, `return _G.asked[1]`)
	assert.Contains(t, items, "Always in this workspace: go test", "the proposed prefix")
	assert.NotContains(t, f1.lastTool(t), "declined")
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))

	f2 := startRules(t, state, ws)
	f2.bashTurn(t, "c2", "go test ./...")
	assert.Equal(t, 0, f2.askedCount(t), "the workspace rule holds after a restart")
	assert.NotContains(t, f2.lastTool(t), "declined")

	f2.bashTurn(t, "c3", "go test ./... && rm -rf x")
	assert.Equal(t, 1, f2.askedCount(t), "a chain with an unmatched command asks")
	assert.Contains(t, f2.lastTool(t), "the user denied running this command")

	f2.bashTurn(t, "c4", "git push origin main")
	assert.Equal(t, 1, f2.askedCount(t), "a deny rule refuses without asking")
	assert.Contains(t, f2.lastTool(t), `deny git push`, "%v", f2.srv.Requests()[len(f2.srv.Requests())-1].Get("messages.@reverse.2").Raw)

	// /permissions lists the rules; deleting the go test line and :w removes it.
	require.NoError(t, f2.Command("Fido /permissions"))
	f2.WaitFor(t, `vim.fn.bufnr("fido://permissions") ~= -1 and vim.fn.join(vim.fn.getbufline(vim.fn.bufnr("fido://permissions"), 1, "$"), "\n"):find("allow go test", 1, true) ~= nil`, 5*time.Second)
	text := strings.Join(f2.Lines(t, "fido://permissions"), "\n")
	assert.Contains(t, text, "allow go test  [workspace]")
	assert.Contains(t, text, "deny git push  [config]")
	require.NoError(t, f2.ExecLua(`
local buf = vim.fn.bufnr("fido://permissions")
vim.api.nvim_set_current_buf(buf)
vim.cmd([[g/allow go test/d]])
vim.cmd("write")`, nil))
	f2.waitTranscript(t, "1 rule(s) removed", 5*time.Second)
	f2.bashTurn(t, "c5", "go test ./...")
	assert.Equal(t, 2, f2.askedCount(t), "without the rule Fido asks again")
}

// /mode plan refuses patch through the invocation guard (no prompt),
// runs bash_exec only in a read-only sandbox (asked as always; where no
// sandbox is enforced the guard refuses it too), and allows read_file and
// update_plan; the statusline shows it.
func TestE2EPlanMode(t *testing.T) {
	f := startRules(t, "", t.TempDir())
	enforced := sandbox.Probe().Enforced
	f.Lua(t, nil, `_G.pick = "Run once"`)
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte("alpha\n"), 0o644))
	require.NoError(t, f.Command("Fido /mode plan"))
	f.WaitFor(t, `require("fido").status().mode == "plan"`, 5*time.Second, `require("fido").status()`)
	planArgs := `{"reason":"r","items":[{"id":"a","title":"Look","status":"in_progress","next_action":"read a.txt"}]}`
	f.srv.Enqueue(
		llmtest.Reply().
			ToolCall("p1", "patch", `{"operations":[{"path":"a.txt","content":"changed\n"}]}`, 1).
			Finish("tool_calls"),
		llmtest.Reply().ToolCall("b1", "bash_exec", `{"command":"touch x"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("r1", "read_file", `{"path":"a.txt"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("u1", "update_plan", planArgs, 1).Finish("tool_calls"),
		llmtest.Text("planned"),
	)
	require.NoError(t, f.Command("Fido look around"))
	f.waitRequests(t, 5)
	reqs := f.srv.Requests()
	assert.Contains(t, reqs[0].Get("messages.@reverse.0.content").String(), "plan mode", "the mode is told in the user message")
	tool := func(i int) string { return reqs[i].Get("messages.@reverse.0.content").String() }
	assert.Contains(t, tool(1), "permission_denied")
	if enforced {
		assert.Contains(t, tool(2), "sandbox: read-only (writes only in its temp dir), no network")
		assert.Contains(t, tool(2), "/x: read-only sandbox")
		assert.Equal(t, 1, f.askedCount(t), "only the command was asked")
	} else {
		assert.Contains(t, tool(2), "permission_denied")
		assert.Equal(t, 0, f.askedCount(t), "nothing was asked")
	}
	assert.Contains(t, tool(3), "alpha")
	assert.NotContains(t, tool(4), "permission_denied")
	disk, err := os.ReadFile(filepath.Join(f.Dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "alpha\n", string(disk))
	assert.NoFileExists(t, filepath.Join(f.Dir, "x"))
	assert.Equal(t, reqs[0].Get("messages.0").Raw, reqs[4].Get("messages.0").Raw, "the system message does not change")
	var line string
	f.Lua(t, &line, `return require("fido").statusline(160)`)
	assert.Contains(t, line, "plan")
}

// "Always in this workspace" on a multi-line script adds a rule for that
// exact script: after a restart the identical script runs without a
// question, /permissions lists the rule and writing the buffer keeps it,
// and a different script asks again.
func TestE2EAlwaysOnAScriptStopsAsking(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	script := "set -e\nmkdir -p out\necho built > out/result.txt"
	turn := func(f *fido, id, command string) {
		t.Helper()
		args, err := json.Marshal(map[string]string{"command": command})
		require.NoError(t, err)
		before := len(f.srv.Requests())
		f.srv.Enqueue(
			llmtest.Reply().ToolCall(id, "bash_exec", string(args), 1).Finish("tool_calls"),
			llmtest.Text("ok"),
		)
		require.NoError(t, f.Command("Fido run "+id))
		f.waitRequests(t, before+2)
	}

	f1 := startRules(t, state, ws)
	f1.Lua(t, nil, `_G.pick = "Always in this workspace: "`)
	turn(f1, "s1", script)
	require.Equal(t, 1, f1.askedCount(t))
	var items []string
	f1.Lua(t, &items, `return _G.asked[1]`)
	assert.Contains(t, items, "Always in this workspace: this exact script (3 lines)", "the rule the choice adds")
	assert.NotContains(t, f1.lastTool(t), "declined")
	got, err := os.ReadFile(filepath.Join(ws, "out", "result.txt"))
	require.NoError(t, err)
	assert.Equal(t, "built\n", string(got))
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))

	f2 := startRules(t, state, ws)
	turn(f2, "s2", script)
	assert.Equal(t, 0, f2.askedCount(t), "the identical script runs without a question after a restart")
	assert.NotContains(t, f2.lastTool(t), "declined")

	require.NoError(t, f2.Command("Fido /permissions"))
	f2.WaitFor(t, `vim.fn.bufnr("fido://permissions") ~= -1 and vim.fn.join(vim.fn.getbufline(vim.fn.bufnr("fido://permissions"), 1, "$"), "\n"):find("allow script", 1, true) ~= nil`, 5*time.Second)
	assert.Contains(t, strings.Join(f2.Lines(t, "fido://permissions"), "\n"), `allow script "set -e\nmkdir -p out\necho built > out/result.txt"  [workspace]`)
	require.NoError(t, f2.ExecLua(`
local buf = vim.fn.bufnr("fido://permissions")
vim.api.nvim_set_current_buf(buf)
vim.cmd("write")`, nil))
	f2.waitTranscript(t, "0 rule(s) removed", 5*time.Second)

	turn(f2, "s3", script+"\necho again >> out/result.txt")
	assert.Equal(t, 1, f2.askedCount(t), "another script asks")
	assert.Contains(t, f2.lastTool(t), "the user denied running this command")
}
