package nvim

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// :'<,'>Fido on a buffer with unsaved changes carries the lines as they are
// in the buffer, labelled with path and range and saying the disk differs.
func TestRangeMentionOfModifiedBuffer(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "x.go"), []byte("package x\n\nfunc A() {}\n"), 0o644))
	n.Lua(t, nil, `vim.cmd("edit x.go")
vim.api.nvim_buf_set_lines(0, 2, 3, false, { "func B() int {", "	return 2", "}" })`)
	n.Lua(t, nil, `vim.cmd("3,5Fido")`)
	assert.Equal(t, []string{
		"x.go:3-5 as in the unsaved buffer (the file on disk differs):",
		"```go",
		"func B() int {",
		"	return 2",
		"}",
		"```",
		" ",
	}, n.Lines(t, "fido://input"))
}

// <C-o> from insert mode opens the picker in normal mode (pickers that start
// their own prompt then get the typed keys), and the mention lands at the
// cursor with insert mode back on.
func TestMentionPickerLeavesInsertMode(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "a.go"), []byte("package a\n"), 0o644))
	n.Lua(t, nil, `_G.modes = {}
vim.ui.select = function(items, opts, cb)
  table.insert(_G.modes, vim.api.nvim_get_mode().mode)
  vim.schedule(function() cb(items[1], 1) end)
end
require("fido.layout").open(true)`)
	_, err := n.Input("iread <C-o>")
	require.NoError(t, err)
	n.WaitFor(t, `#_G.modes == 1`, 2*time.Second)
	var modes []string
	n.Lua(t, &modes, `return _G.modes`)
	assert.Equal(t, []string{"n"}, modes)
	n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "read @a.go "`, 2*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	n.WaitFor(t, `vim.api.nvim_get_mode().mode == "i"`, 2*time.Second)
}

// "@" completion (omni and :Fido) offers what the <C-o> picker offers: git's
// ignore rules apply.
func TestMentionCompletionUsesIgnoreRules(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	n := nvimtest.Start(t, nvimtest.Options{})
	for name, body := range map[string]string{".gitignore": "secret.env\nbuild/\n", "kept.go": "package k\n",
		"secret.env": "X=1\n", "build/out.go": "package b\n", "pkg/lexer.go": "package pkg\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(n.Dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(n.Dir, name), []byte(body), 0o644))
	}
	out, err := exec.Command("git", "-C", n.Dir, "init", "-q").CombinedOutput()
	require.NoError(t, err, string(out))
	var all, pkg, picker []string
	n.Lua(t, &all, `return require("fido.complete").omnifunc(0, "@")`)
	n.Lua(t, &pkg, `return vim.fn.getcompletion("Fido @pkg/", "cmdline")`)
	n.Lua(t, &picker, `local out = vim.deepcopy(require("fido.context").names)
for _, f in ipairs(require("fido.mentions").files()) do table.insert(out, "@" .. f) end
return out`)
	assert.ElementsMatch(t, picker, all, "the editor mentions, then the same files as the <C-o> picker")
	assert.Contains(t, all, "@kept.go")
	assert.NotContains(t, all, "@secret.env")
	assert.NotContains(t, all, "@build/out.go")
	assert.Equal(t, []string{"@pkg/lexer.go"}, pkg)
}
