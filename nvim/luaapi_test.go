package nvim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// :checkhealth fido is one function per section, in the order of
// fido.health's sections (a new section is one more row).
func TestCheckhealthOneFunctionPerSection(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	var titles []string
	n.Lua(t, &titles, `local out = {}
for _, s in ipairs(require("fido.health").sections) do
  assert(type(s[2]) == "function", s[1])
  table.insert(out, s[1])
end
return out`)
	assert.Equal(t, []string{"Fido binary", "Neovim", "Language servers (lsp_* tools, diagnostics after edits)", "Provider",
		"Statusline plugins", "Questions (approvals, reviews, MCP trust, ask_user)", "Instructions and your commands",
		"MCP servers", "Tools"}, titles)
	require.NoError(t, n.Command("checkhealth fido"))
	var report string
	n.Lua(t, &report, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	at := 0
	for _, title := range titles {
		i := strings.Index(report[at:], title)
		require.GreaterOrEqual(t, i, 0, "section %q is not in the report (in order):\n%s", title, report)
		at += i + len(title)
	}
}

// Loading the plugin (its user commands) loads none of Fido's modules but
// the mention tracking; a command loads the rest when it runs.
func TestPluginLoadsFidoOnFirstCommand(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	const loaded = `local out = {}
for name in pairs(package.loaded) do
  if name == "fido" or name:match("^fido%.") then table.insert(out, name) end
end
table.sort(out)
return out`
	var before []string
	n.Lua(t, &before, loaded)
	assert.Equal(t, []string{"fido.config", "fido.context", "fido.mentions"}, before)
	var completed []string
	n.Lua(t, &completed, `return vim.fn.getcompletion("Fido /pla", "cmdline")`)
	assert.Contains(t, completed, "/plan")
	var after []string
	n.Lua(t, &after, loaded)
	assert.Contains(t, after, "fido.commands")
	assert.Contains(t, after, "fido")
}
