package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// These tests drive the real bin/fido from a real headless Neovim against the
// fake provider, across features: tools and buffers, the plan window and its
// restore, delegation and the subagent bar, /quit.

func TestMain(m *testing.M) { nvimtest.Main(m) }

type fido struct {
	*nvimtest.Nvim
	srv *llmtest.Server
}

func startFido(t *testing.T, stateDir string) *fido {
	t.Helper()
	srv := llmtest.NewServer(t)
	env := []string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=test-key", "FIDO_MODEL=test/model"}
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: env})
	if stateDir != "" {
		n.Lua(t, nil, `vim.env.FIDO_STATE_DIR = ...`, stateDir)
		n.StateDir = stateDir
	}
	n.Lua(t, nil, `_G.fido_notes = {}
vim.notify = function(msg, level) table.insert(_G.fido_notes, { msg = msg, level = level }) end`)
	return &fido{Nvim: n, srv: srv}
}

func (f *fido) transcript(t *testing.T) string {
	return strings.Join(f.Lines(t, "fido://transcript"), "\n")
}

func (f *fido) waitIdleAfter(t *testing.T, calls int) {
	t.Helper()
	f.WaitFor(t, `require("fido").status().usage.calls >= `+strconv.Itoa(calls)+` and require("fido").status().state == "idle"`,
		15*time.Second, `require("fido").status()`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
}

// A patch never overwrites a buffer with unsaved changes; once saved, the
// patch applies and the open buffer shows the new content.
func TestE2EPatchRespectsUnsavedBufferAndReloads(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644))
	require.NoError(t, f.Command("edit "+path))
	require.NoError(t, f.Command("normal! Gounsaved line"))
	patch := `{"operations":[{"path":"notes.txt","search":"beta","replace":"gamma"}]}`
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_1", "patch", patch, 2).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("I could not change it."),
	)
	require.NoError(t, f.Command("Fido change beta to gamma in notes.txt"))
	f.waitIdleAfter(t, 2)
	disk, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "alpha\nbeta\n", string(disk), "nothing written over unsaved changes")
	text := f.transcript(t)
	assert.Contains(t, text, "notes.txt")
	assert.Contains(t, text, "unsaved")
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[1].Get("messages.@reverse.0.content").String(), "unsaved", "the model is told why")

	// Save, then the same patch applies and the buffer reloads.
	require.NoError(t, f.Command("write"))
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_2", "patch", patch, 1).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("Done."),
	)
	require.NoError(t, f.Command("Fido try again"))
	f.waitIdleAfter(t, 4)
	disk, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "alpha\ngamma\nunsaved line\n", string(disk))
	f.WaitFor(t, `vim.fn.getbufline(vim.fn.bufnr(...), 2)[1] == "gamma"`, 5*time.Second, `vim.fn.getbufline(vim.fn.bufnr(...), 1, "$")`)
}

// /quit closes Fido's windows without losing the conversation.
func TestE2EQuitClosesWindows(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido.layout").transcript_win() ~= nil`, 5*time.Second)
	require.NoError(t, f.Command("Fido /quit"))
	f.WaitFor(t, `require("fido.layout").transcript_win() == nil and require("fido.layout").input_win() == nil`, 5*time.Second)
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido.layout").transcript_win() ~= nil`, 5*time.Second)
}

// Fido's window options are local: another buffer shown in a window split
// from the transcript keeps the user's statusline; the transcript shows totals.
func TestE2ESplitFromTranscriptKeepsUserStatusline(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido.layout").transcript_win() ~= nil`, 5*time.Second)
	var shown []string
	f.Lua(t, &shown, `
		local tw = require("fido.layout").transcript_win()
		vim.api.nvim_set_current_win(tw)
		vim.cmd("split")
		vim.cmd("enew")
		vim.api.nvim_buf_set_name(0, "scratch.txt")
		local other = vim.api.nvim_get_current_win()
		local function eval(w)
			local s = vim.api.nvim_win_get_option(w, "statusline")
			return vim.api.nvim_eval_statusline(s, { winid = w, maxwidth = 300 }).str
		end
		return { eval(other), eval(tw) }`)
	assert.NotContains(t, shown[0], "calls", "another buffer in a split keeps the user's statusline")
	assert.Contains(t, shown[1], "calls")
}
