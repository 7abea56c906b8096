package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// @diagnostics:all attaches every loaded buffer's diagnostics, hidden ones
// included; each block is bounded (200 diagnostics or quickfix entries, 64
// KiB of buffer text) and says what it left out.
func TestE2EEditorMentionsAllAndBounded(t *testing.T) {
	f := startFido(t, "")
	a, b := filepath.Join(f.Dir, "a.go"), filepath.Join(f.Dir, "b.go")
	require.NoError(t, os.WriteFile(a, []byte("package a\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("package b\n"), 0o644))
	require.NoError(t, f.Command("edit "+b))
	require.NoError(t, f.Command("edit "+a)) // b.go stays loaded, hidden
	require.NoError(t, f.ExecLua(`
local ns = vim.api.nvim_create_namespace("test")
local b = vim.fn.bufnr("b.go")
vim.diagnostic.set(ns, 0, { { lnum = 0, col = 0, severity = vim.diagnostic.severity.WARN, message = "A-MARKER" } })
vim.diagnostic.set(ns, b, { { lnum = 0, col = 8, severity = vim.diagnostic.severity.ERROR, message = "B-MARKER" } })`, nil))
	f.srv.Enqueue(llmtest.Text("seen"))
	require.NoError(t, f.Command("Fido check @diagnostics:all"))
	f.waitIdleAfter(t, 1)
	msg := f.srv.Requests()[0].Get("messages.@reverse.0.content").String()
	assert.Contains(t, msg, "[@diagnostics:all: every loaded buffer]")
	assert.Contains(t, msg, "a.go:1:1: WARN: A-MARKER")
	assert.Contains(t, msg, "b.go:1:9: ERROR: B-MARKER")

	// Past the bounds: 250 diagnostics, 250 quickfix entries, a 100 KiB buffer.
	require.NoError(t, f.ExecLua(`
vim.diagnostic.reset(vim.api.nvim_create_namespace("test"), 0)
local ns = vim.api.nvim_create_namespace("many")
local lines, diags, qf = {}, {}, {}
for i = 1, 2000 do lines[i] = string.rep("x", 50) .. " line " .. i end
vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
for i = 1, 250 do
  diags[i] = { lnum = i - 1, col = 0, severity = vim.diagnostic.severity.HINT, message = "D" .. i }
  qf[i] = { filename = "a.go", lnum = i, text = "Q" .. i }
end
vim.diagnostic.set(ns, 0, diags)
vim.fn.setqflist(qf, "r")`, nil))
	f.srv.Enqueue(llmtest.Text("seen"))
	require.NoError(t, f.Command("Fido check @diagnostics @quickfix @buffer"))
	f.waitIdleAfter(t, 2)
	msg = f.srv.Requests()[1].Get("messages.@reverse.0.content").String()
	has := func(s string) bool { return strings.Contains(msg, s) }
	assert.True(t, has("a.go:200:1: HINT: D200\n[more diagnostics not shown: at most 200]"), "200 diagnostics, then the note")
	assert.False(t, has("D201"))
	assert.True(t, has("a.go:200: Q200\n[50 more entries not shown]"), "200 quickfix entries, then the note")
	assert.False(t, has("Q201"))
	assert.True(t, has("[@buffer: a.go, 2000 lines as in Neovim, with unsaved changes"))
	assert.True(t, has(" line 1\n"))
	assert.Regexp(t, `\[buffer cut: \d+ more lines not shown\]`, msg[len(msg)-4096:])
	assert.False(t, has(" line 2000\n"))
	assert.Less(t, len(msg), 3*64*1024, "every block is bounded")
}
