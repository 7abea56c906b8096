package nvim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// :helptags runs clean on doc/fido.txt, and every user command the plugin
// defines, every slash command and every highlight group is documented.
func TestHelpFileCoversCommandsAndRunsClean(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	root := nvimtest.RepoRoot(t)
	help, err := os.ReadFile(filepath.Join(root, "doc", "fido.txt"))
	require.NoError(t, err)

	// helptags on a copy, so the checkout gets no tags file; errors (duplicate
	// tags, unreadable file) surface as a Lua error or in :messages.
	docDir := filepath.Join(n.Tmp, "doc")
	require.NoError(t, os.MkdirAll(docDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(docDir, "fido.txt"), help, 0o644))
	var msg string
	n.Lua(t, &msg, `local ok, err = pcall(vim.cmd, "helptags " .. vim.fn.fnameescape(...)); return ok and "" or tostring(err)`, docDir)
	assert.Empty(t, msg, ":helptags failed")
	assert.NotContains(t, n.Messages(t), "E154", "duplicate tags")
	tags, err := os.ReadFile(filepath.Join(docDir, "tags"))
	require.NoError(t, err)
	assert.Contains(t, string(tags), "fido.txt")

	var cmds []string
	n.Lua(t, &cmds, `
		local out = {}
		for name in pairs(vim.api.nvim_get_commands({})) do
			if name:match("^Fido") then table.insert(out, name) end
		end
		table.sort(out)
		return out`)
	require.NotEmpty(t, cmds, "the plugin defines its commands without setup()")
	for _, c := range cmds {
		assert.Contains(t, string(tags), ":"+c+"\t", "user command :%s has no *:%s* tag in doc/fido.txt", c, c)
	}
	var completed []string
	n.Lua(t, &completed, `return require("fido.commands").slash`)
	for _, c := range agent.Commands {
		assert.Contains(t, string(help), "  "+c.Name, "slash command %s is not documented", c.Name)
		assert.Contains(t, completed, c.Name, "slash command %s is not completed by :Fido", c.Name)
	}
	var groups []string
	n.Lua(t, &groups, `local out = {} for name in pairs(require("fido.highlights").groups) do table.insert(out, name) end return out`)
	require.NotEmpty(t, groups)
	for _, g := range groups {
		assert.True(t, strings.Contains(string(tags), "hl-"+g+"\t"), "highlight group %s is not documented", g)
	}
}
