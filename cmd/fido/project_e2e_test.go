package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// The workspace's AGENTS.md and the user's own reach messages[0], which then
// stays byte-identical; /reload-instructions picks up a change and says the
// cache prefix changes.
func TestE2EProjectInstructions(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("PROJECT-MARKER: run go test before answering\n"), 0o644))
	f := startFido(t, "", ws)
	var cfgHome string
	f.Lua(t, &cfgHome, `return vim.env.XDG_CONFIG_HOME`)
	require.NotEmpty(t, cfgHome)
	require.NoError(t, os.MkdirAll(filepath.Join(cfgHome, "fido"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfgHome, "fido", "AGENTS.md"), []byte("USER-MARKER\n"), 0o644))

	f.srv.Enqueue(llmtest.Text("one"), llmtest.Text("two"))
	require.NoError(t, f.Command("Fido first"))
	f.waitIdleAfter(t, 1)
	require.NoError(t, f.Command("Fido second"))
	f.waitIdleAfter(t, 2)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	sys := reqs[0].Get("messages.0.content").String()
	assert.Contains(t, sys, "PROJECT-MARKER")
	assert.Contains(t, sys, "USER-MARKER")
	assert.Less(t, strings.Index(sys, "USER-MARKER"), strings.Index(sys, "PROJECT-MARKER"))
	assert.Equal(t, sys, reqs[1].Get("messages.0.content").String())

	// An edit does not change the running conversation until reloaded.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("PROJECT-MARKER-2\n"), 0o644))
	f.srv.Enqueue(llmtest.Text("three"), llmtest.Text("four"))
	require.NoError(t, f.Command("Fido third"))
	f.waitIdleAfter(t, 3)
	assert.Equal(t, sys, f.srv.Requests()[2].Get("messages.0.content").String())
	require.NoError(t, f.Command("Fido /reload-instructions"))
	f.waitTranscript(t, "cache prefix changes", 5*time.Second)
	require.NoError(t, f.Command("Fido fourth"))
	f.waitIdleAfter(t, 4)
	assert.Contains(t, f.srv.Requests()[3].Get("messages.0.content").String(), "PROJECT-MARKER-2")
}

// A Markdown file in .fido/commands is a slash command: completion offers it
// and its body, with $ARGUMENTS and $1 filled, is the user message.
func TestE2ECustomSlashCommand(t *testing.T) {
	f := startFido(t, "")
	dir := filepath.Join(f.Dir, ".fido", "commands")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, f.Command("Fido"))
	// The session exists once the host sent its first status (root set).
	f.WaitFor(t, `require("fido").status().root ~= nil`, 10*time.Second)
	// Written after the host started: found without a restart.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "greet.md"),
		[]byte("---\ndescription: Greets someone\nargument-hint: <name>\n---\nSay hello to $1 (all: $ARGUMENTS)\n"), 0o644))
	var comp []string
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido /gr", "cmdline")`)
	assert.Equal(t, []string{"/greet"}, comp)

	f.srv.Enqueue(llmtest.Text("Hello!"))
	require.NoError(t, f.Command("Fido /greet Ada and Bob"))
	f.waitIdleAfter(t, 1)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Say hello to Ada (all: Ada and Bob)", reqs[0].Get("messages.@reverse.0.content").String())
}

// An AGENTS.md in a subdirectory joins the first tool result that reaches
// into that directory, once; never the system message.
func TestE2ENestedInstructions(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "pkg", "AGENTS.md"), []byte("NESTED-MARKER: use tabs\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "pkg", "a.go"), []byte("package pkg\n"), 0o644))
	f := startFido(t, "", ws)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("r1", "read_file", `{"path":"pkg/a.go"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("r2", "read_file", `{"path":"pkg/a.go"}`, 1).Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido read pkg/a.go twice"))
	f.waitIdleAfter(t, 3)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 3)
	assert.NotContains(t, reqs[0].Get("messages.0.content").String(), "NESTED-MARKER")
	first := reqs[1].Get("messages.@reverse.0.content").String()
	assert.Contains(t, first, "[instructions from pkg/AGENTS.md")
	assert.Contains(t, first, "NESTED-MARKER")
	second := reqs[2].Get("messages.@reverse.0.content").String()
	assert.Contains(t, second, "package pkg")
	assert.NotContains(t, second, "NESTED-MARKER", "attached once per conversation")
}

// /model switches the next request's model (directly or through the
// picker over the endpoint's list); an unknown id is refused and the model
// stays; completion offers the ids.
func TestE2EModelSwitch(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetModels(`{"data":[
	  {"id":"test/model","context_length":100000,"pricing":{"prompt":"0.000001","completion":"0.000002"},"supported_parameters":["tools"]},
	  {"id":"x/y","context_length":40000,"pricing":{"prompt":"0.000003","completion":"0.000015"},"supported_parameters":["tools"]},
	  {"id":"z/pick","context_length":8000}]}`)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=k", "FIDO_MODEL=test/model"}})
	f := &fido{Nvim: n, srv: srv}
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `(require("fido").status().context or {}).limit == 75000`, 10*time.Second, `require("fido").status()`)

	require.NoError(t, f.Command("Fido /model x/y"))
	f.WaitFor(t, `require("fido").status().model == "x/y"`, 5*time.Second, `require("fido").status()`)
	f.WaitFor(t, `require("fido").status().context.limit == 30000`, 5*time.Second, `require("fido").status()`)
	f.waitTranscript(t, "the provider's cache starts cold", 5*time.Second)
	require.NoError(t, f.Command("Fido /model no/such-model"))
	f.waitTranscript(t, "not in the endpoint's model list", 5*time.Second)
	assert.True(t, f.Bool(t, `require("fido").status().model == "x/y"`), "the model stays")
	var comp []string
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido /model z", "cmdline")`)
	assert.Equal(t, []string{"z/pick"}, comp)

	srv.Enqueue(llmtest.Text("hi"))
	require.NoError(t, f.Command("Fido hello"))
	f.waitRequests(t, 1)
	assert.Equal(t, "x/y", srv.Requests()[0].Get("model").String())

	f.Lua(t, nil, `vim.ui.select = function(items, opts, cb)
  _G.model_items = items
  for i, it in ipairs(items) do if it:find("z/pick", 1, true) == 1 then return cb(it, i) end end
  cb(nil, nil)
end`)
	require.NoError(t, f.Command("Fido /model"))
	f.WaitFor(t, `require("fido").status().model == "z/pick"`, 5*time.Second, `require("fido").status()`)
	var items []string
	f.Lua(t, &items, `return _G.model_items`)
	assert.Contains(t, items, "x/y · 40k ctx · $3.00/$15.00 per M · tools")
}

// @buffer, @diagnostics, @quickfix and @selection attach what the editor
// knows at submit time: the unsaved buffer text, vim.diagnostic entries and
// the quickfix list.
func TestE2EEditorMentions(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "main.go")
	require.NoError(t, os.WriteFile(path, []byte("package main\n\nfunc main() {}\n"), 0o644))
	require.NoError(t, f.Command("edit "+path))
	require.NoError(t, f.ExecLua(`
vim.api.nvim_buf_set_lines(0, 3, 3, false, { "// UNSAVED-LINE" })
local ns = vim.api.nvim_create_namespace("test")
vim.diagnostic.set(ns, 0, { { lnum = 2, col = 5, severity = vim.diagnostic.severity.ERROR, message = "DIAG-MARKER undefined: foo", source = "compiler" } })
vim.fn.setqflist({ { filename = "main.go", lnum = 3, text = "QF-MARKER failing test" } }, "r")
vim.fn.setpos("'<", { 0, 1, 1, 0 })
vim.fn.setpos("'>", { 0, 1, 1, 0 })`, nil))
	var comp []string
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido @diag", "cmdline")`)
	assert.Equal(t, []string{"@diagnostics", "@diagnostics:all"}, comp)

	f.srv.Enqueue(llmtest.Text("seen"))
	require.NoError(t, f.Command("Fido look at @buffer, @diagnostics and @quickfix and @selection"))
	f.waitIdleAfter(t, 1)
	msg := f.srv.Requests()[0].Get("messages.@reverse.0.content").String()
	assert.Contains(t, msg, "[@buffer: main.go, 4 lines as in Neovim, with unsaved changes")
	assert.Contains(t, msg, "// UNSAVED-LINE")
	assert.Contains(t, msg, "main.go:3:6: ERROR: DIAG-MARKER undefined: foo (compiler)")
	assert.Contains(t, msg, "main.go:3: QF-MARKER failing test")
	assert.Contains(t, msg, "[@selection: main.go:1-1 as in Neovim]")
}

// With a Claude model every request carries cache_control breakpoints while
// the system text and the tools keep their bytes; the statusline counts
// cache writes.
func TestE2ECacheBreakpointsForClaude(t *testing.T) {
	srv := llmtest.NewServer(t)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=k", "FIDO_MODEL=anthropic/claude-sonnet-4.5"}})
	f := &fido{Nvim: n, srv: srv}
	for i := 0; i < 3; i++ {
		srv.Enqueue(llmtest.Reply().Content("ok").Finish("stop").
			Raw(`data: {"id":"u","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":40,"cache_write_tokens":60},"cost":0.01}}` + "\n\n"))
		require.NoError(t, f.Command("Fido question"))
		f.waitRequests(t, i+1)
	}
	reqs := srv.Requests()
	for _, r := range reqs {
		assert.Equal(t, "ephemeral", r.Get("messages.0.content.0.cache_control.type").String())
		assert.Equal(t, reqs[0].Get("messages.0.content.0.text").String(), r.Get("messages.0.content.0.text").String())
		assert.Equal(t, reqs[0].Get("tools").Raw, r.Get("tools").Raw)
	}
	f.WaitFor(t, `require("fido").status().usage.cache_write == 180`, 5*time.Second, `require("fido").status()`)
	assert.Contains(t, f.transcript(t), "cache written 60")
}
