package nvim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// hlLinks returns the group each name links to ("" when it has its own
// attributes or is undefined), read with :highlight (0.7 has no nvim_get_hl).
const hlLinks = `
local out = {}
for _, name in ipairs(...) do
  local s = vim.fn.execute("highlight " .. name)
  out[name] = s:match("links to (%S+)") or ""
end
return out`

type hlAttrs struct {
	Background int  `msgpack:"background"`
	Foreground int  `msgpack:"foreground"`
	Bold       bool `msgpack:"bold"`
}

func getHL(t *testing.T, n *nvimtest.Nvim, name string) hlAttrs {
	t.Helper()
	var a hlAttrs
	n.Lua(t, &a, `return vim.api.nvim_get_hl_by_name(..., true)`, name)
	return a
}

func TestHighlightGroups(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `require("fido.highlights").setup()`)

	want := map[string]string{
		"FidoPlanPending":    "Comment",
		"FidoPlanInProgress": "Function",
		"FidoPlanBlocked":    "ErrorMsg",
		"FidoPlanDone":       "String",
		"FidoPlanHeader":     "Title",
		"FidoPlanMeta":       "Comment",
		"FidoPlanNormal":     "NormalFloat",
		"FidoPlanBorder":     "FloatBorder",
		"FidoReasoning":      "Comment",
		"FidoTool":           "Special",
		"FidoError":          "ErrorMsg",
		"FidoUser":           "Title",
	}
	names := []string{}
	for k := range want {
		names = append(names, k)
	}
	var links map[string]string
	n.Lua(t, &links, hlLinks, names)
	assert.Equal(t, want, links)

	sub := getHL(t, n, "FidoSubagent")
	assert.Equal(t, hlAttrs{Background: 0xa78bfa, Foreground: 0x1e1b2e, Bold: true}, sub)
	var cterm hlAttrs
	n.Lua(t, &cterm, `return vim.api.nvim_get_hl_by_name("FidoSubagent", false)`)
	assert.Equal(t, hlAttrs{Background: 141, Foreground: 234, Bold: true}, cterm, "cterm fallback")

	// A colorscheme wipes the groups; they come back.
	n.Lua(t, nil, `vim.cmd("highlight clear"); vim.cmd("doautocmd ColorScheme")`)
	assert.Equal(t, sub, getHL(t, n, "FidoSubagent"))
	n.Lua(t, &links, hlLinks, names)
	assert.Equal(t, want, links)
}

// default = true: a group the colorscheme (or user) defined wins, also after
// a ColorScheme event re-applies Fido's defaults.
func TestHighlightGroupsKeepColorschemeDefinitions(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `
vim.cmd("highlight FidoSubagent guifg=#010203 guibg=#040506")
vim.cmd("highlight link FidoPlanDone Identifier")
require("fido.highlights").setup()`)
	sub := getHL(t, n, "FidoSubagent")
	assert.Equal(t, hlAttrs{Background: 0x040506, Foreground: 0x010203}, sub)
	var links map[string]string
	n.Lua(t, &links, hlLinks, []string{"FidoPlanDone", "FidoPlanPending"})
	assert.Equal(t, map[string]string{"FidoPlanDone": "Identifier", "FidoPlanPending": "Comment"}, links)

	n.Lua(t, nil, `vim.cmd("doautocmd ColorScheme")`)
	require.Equal(t, sub, getHL(t, n, "FidoSubagent"))
	n.Lua(t, &links, hlLinks, []string{"FidoPlanDone"})
	assert.Equal(t, "Identifier", links["FidoPlanDone"])
}
