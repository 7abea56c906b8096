package main

import (
	"encoding/json"
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

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/tools/shell"
)

// everythingEntry is @modelcontextprotocol/server-everything's entry point,
// installed by scripts/ensure-tools. Under CI its absence fails the test.
func everythingEntry(t *testing.T) string {
	t.Helper()
	entry := os.Getenv("FIDO_MCP_EVERYTHING")
	_, statErr := os.Stat(entry)
	_, nodeErr := exec.LookPath("node")
	if entry == "" || statErr != nil || nodeErr != nil {
		msg := "FIDO_MCP_EVERYTHING (the server-everything entry point) or node is missing; run: eval \"$(bash scripts/ensure-tools)\""
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return entry
}

// serverPID finds the MCP server process started for this workspace: node
// running entry with its working directory in the workspace.
func serverPID(t *testing.T, entry, dir string) int {
	t.Helper()
	want, _ := filepath.EvalSymlinks(dir)
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		// The server itself, not the guard whose arguments name it too.
		if err != nil || !strings.Contains(string(cmdline), entry) || strings.Contains(string(cmdline), shell.GuardCommand) {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join(p, "cwd")); err == nil && cwd == want {
			pid, _ := strconv.Atoi(filepath.Base(p))
			return pid
		}
	}
	return 0
}

// A real MCP server nobody here wrote, over stdio from the project's
// .mcp.json: trusted through vim.ui.select, its echo and get-sum tools called
// with approval, a denied call, a subagent refused a non-read-only tool, the
// catalog byte-identical across the conversation, and the server killed
// mid-session and restarted at the next call.
func TestE2EMCPEverythingServer(t *testing.T) {
	entry := everythingEntry(t)
	f := startFido(t, t.TempDir())
	f.Lua(t, nil, `vim.env.XDG_CONFIG_HOME = ...`, t.TempDir())
	// Node starts slowly on a busy machine: the first request may wait longer.
	f.Lua(t, nil, `require("fido").setup({ mcp = { start_timeout_ms = 30000 } })`)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{entry, "stdio"}},
	}})
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, ".mcp.json"), cfg, 0o644))
	f.Lua(t, nil, `_G.asked = {}
_G.answers = { "Trust and start", "Run once", "Always this session" }
vim.ui.select = function(items, opts, cb)
  table.insert(_G.asked, { prompt = opts.prompt, items = items, waiting = require("fido").status().waiting })
  local a = table.remove(_G.answers, 1)
  for i, it in ipairs(items) do if it == a then return cb(it, i) end end
  cb(nil, nil)
end`)

	// Turn 1: echo (Run once), then get-sum (Always this session).
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("m1", "mcp__everything__echo", `{"message":"hello mcp"}`, 2).Finish("tool_calls"),
		llmtest.Reply().ToolCall("m2", "mcp__everything__get-sum", `{"a":2,"b":3}`, 2).Finish("tool_calls"),
		llmtest.Text("Done."),
	)
	require.NoError(t, f.Command("Fido use the everything server"))
	f.waitIdleAfter(t, 3)
	var asked []struct {
		Prompt  string   `msgpack:"prompt"`
		Items   []string `msgpack:"items"`
		Waiting string   `msgpack:"waiting"`
	}
	f.Lua(t, &asked, `return _G.asked`)
	require.Len(t, asked, 3, "trust, then one approval per call")
	assert.Contains(t, asked[0].Prompt, ".mcp.json")
	assert.Equal(t, []string{"Not now", "Never for this workspace", "Trust and start"}, asked[0].Items)
	assert.Contains(t, asked[1].Prompt, `everything/echo`)
	for i, q := range asked {
		assert.Equal(t, "approval", q.Waiting, "question %d is an approval (statusline: waiting for approval)", i)
	}
	assert.Equal(t, []string{"Deny", "Deny with reason…", "Run once", "Always this session", "Always for this tool in this workspace"}, asked[1].Items)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 3)
	last := func(i int) string {
		msgs := f.srv.Requests()[i].Get("messages").Array()
		return msgs[len(msgs)-1].Get("content").String()
	}
	assert.Equal(t, "Echo: hello mcp", last(1))
	assert.Equal(t, "The sum of 2 and 3 is 5.", last(2))
	var names []string
	for _, n := range reqs[0].Get("tools.#.function.name").Array() {
		names = append(names, n.String())
	}
	require.Contains(t, names, "mcp__everything__echo")
	firstMCP := 0
	for i, n := range names {
		if strings.HasPrefix(n, "mcp__") {
			firstMCP = i
			break
		}
	}
	require.Positive(t, firstMCP)
	for i, n := range names {
		assert.Equal(t, i >= firstMCP, strings.HasPrefix(n, "mcp__"), "built-in tools first, then MCP tools: %v", names)
	}

	// Turn 2: a denied call runs nothing and tells the model.
	f.Lua(t, nil, `_G.answers = { "Deny" }`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("m3", "mcp__everything__echo", `{"message":"again"}`, 1).Finish("tool_calls"),
		llmtest.Text("Not echoing."),
	)
	require.NoError(t, f.Command("Fido echo again"))
	f.waitIdleAfter(t, 5)
	assert.Contains(t, last(4), "declined")

	// Turn 3: a subagent is refused a tool that is not read-only, without a
	// prompt; an approved read-only tool works for it.
	f.Lua(t, nil, `_G.answers = {}; _G.asked = {}`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("d1", "delegate", `{"task":"add numbers"}`, 1).Finish("tool_calls"),
		llmtest.Reply().
			ToolCall("s1", "mcp__everything__toggle-simulated-logging", `{}`, 1).
			ToolCall("s2", "mcp__everything__get-sum", `{"a":40,"b":2}`, 1).
			Finish("tool_calls"),
		llmtest.Text(`{"status":"completed","summary":"sum is 42","findings":[],"recommended_next_steps":[],"tests_to_run":[],"uncertainties":[]}`),
		llmtest.Text("The subagent added."),
	)
	require.NoError(t, f.Command("Fido delegate a sum"))
	f.waitIdleAfter(t, 9)
	sub := f.srv.Requests()[7].Get("messages").Array()
	assert.Contains(t, sub[len(sub)-2].Get("content").String(), "permission_denied")
	assert.Equal(t, "The sum of 40 and 2 is 42.", sub[len(sub)-1].Get("content").String())
	assert.True(t, f.Bool(t, `#_G.asked == 0`), "a subagent never prompts")

	// Turn 4: the server is killed; the next call restarts it.
	pid := serverPID(t, entry, f.Dir)
	require.NotZero(t, pid, "the server runs with the workspace as its cwd")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	// The host notices the exit (the state Lua shows in /mcp and health).
	f.WaitFor(t, `(require("fido.mcp").state.servers[1] or ""):find("crashed") ~= nil`, 5*time.Second, `require("fido.mcp").state`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("m4", "mcp__everything__get-sum", `{"a":1,"b":1}`, 1).Finish("tool_calls"),
		llmtest.Text("Still adding."),
	)
	require.NoError(t, f.Command("Fido add after the crash"))
	f.waitIdleAfter(t, 11)
	assert.Equal(t, "The sum of 1 and 1 is 2.", last(10))
	newPID := serverPID(t, entry, f.Dir)
	assert.NotZero(t, newPID)
	assert.NotEqual(t, pid, newPID)

	// The main conversation advertised the same tool bytes in every request
	// (the subagent's too: same tool objects).
	all := f.srv.Requests()
	for i, r := range all {
		assert.Equal(t, all[0].Get("tools").Raw, r.Get("tools").Raw, "tools of request %d", i)
	}

	require.NoError(t, f.Command("Fido /mcp"))
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("everything %(project%): ready with") ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	assert.Contains(t, f.transcript(t), "restarted 1×")
	assert.NotContains(t, f.transcript(t), "join at /mcp reload", "the server was in the first catalog")

	// A server prompt is a slash command (completed), arguments by position;
	// its text goes to the model as the user's message.
	assert.True(t, f.Bool(t, `vim.tbl_contains(vim.tbl_map(function(c) return c.name end, require("fido.commands").all()), "/mcp:everything:args-prompt")`))
	f.srv.Enqueue(llmtest.Text("Sunny."))
	require.NoError(t, f.Command("Fido /mcp:everything:args-prompt Paris France"))
	f.waitIdleAfter(t, 12)
	assert.Equal(t, "What's weather in Paris, France?", last(11))
}

// A server that cannot start: a broken config file is one error line, the
// good server from setup() still gets its state reported, the failed one shows
// in /mcp, in :checkhealth fido and as a statusline marker.
func TestE2EMCPFailedServerIsVisible(t *testing.T) {
	f := startFido(t, t.TempDir())
	cfgHome := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "fido"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "fido", "mcp.json"), []byte(`{"mcpServers": {`), 0o644))
	f.Lua(t, nil, `vim.env.XDG_CONFIG_HOME = ...`, cfgHome)
	f.Lua(t, nil, `require("fido").setup({ mcp = { servers = { ghost = { command = ... } } } })`, filepath.Join(t.TempDir(), "no-such-server"))
	require.NoError(t, f.Command("Fido /mcp"))
	f.WaitFor(t, `#require("fido.mcp").state.failed == 1`, 10*time.Second, `require("fido.mcp").state`)
	f.WaitFor(t, `require("fido").statusline():find("MCP✗", 1, true) ~= nil`, 5*time.Second, `require("fido").statusline()`)
	want := strconv.Quote(filepath.Join(cfgHome, "fido", "mcp.json") + ": not valid MCP configuration JSON")
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find(`+want+`, 1, true) ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	var health string
	f.Lua(t, &health, `vim.cmd("checkhealth fido") return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	assert.Contains(t, health, "ghost (setup): failed")
	assert.Contains(t, health, "mcp.json")
}
