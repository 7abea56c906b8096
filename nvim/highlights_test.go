package nvim

import (
	"math"
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
		"FidoHeader":         "Title",
		"FidoNotice":         "Comment",
		"FidoReasoning":      "Comment",
		"FidoTool":           "Special",
		"FidoError":          "ErrorMsg",
		"FidoUser":           "Title",
	}
	if n.Bool(t, `vim.fn.synIDtrans(vim.fn.hlID("NormalFloat")) == vim.fn.synIDtrans(vim.fn.hlID("Pmenu"))`) {
		// Before 0.10 floats are Pmenu's magenta: the plan window uses Normal.
		want["FidoPlanNormal"], want["FidoPlanBorder"] = "Normal", "Normal"
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

// hlContrast resolves each group's foreground and background (links
// followed, reverse applied, a missing background taken from the window's
// normal group, a missing colour from Normal or the terminal's default) with
// the default colours, in cterm and in termguicolors mode.
const hlContrast = `
local names, normal_of = ...
local out = {}
for _, rgb in ipairs({ false, true }) do
  vim.o.termguicolors = rgb
  local function get(name)
    local h = vim.api.nvim_get_hl_by_name(name, rgb)
    local fg, bg = h.foreground, h.background
    if h.reverse then fg, bg = bg, fg end
    return fg, bg
  end
  local nfg, nbg = get("Normal")
  for _, name in ipairs(names) do
    local fg, bg = get(name)
    if bg == nil and normal_of[name] then
      local _, wbg = get(normal_of[name])
      bg = wbg
    end
    fg = fg or nfg or "default-fg"
    bg = bg or nbg or "default-bg"
    table.insert(out, { name = name, rgb = rgb, fg = tostring(fg), bg = tostring(bg),
      fgn = type(fg) == "number" and fg or -1, bgn = type(bg) == "number" and bg or -1 })
  end
end
return out`

// luminance is the WCAG relative luminance of a 0xRRGGBB colour.
func luminance(c int) float64 {
	ch := func(v int) float64 {
		x := float64(v) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c>>16&0xff) + 0.7152*ch(c>>8&0xff) + 0.0722*ch(c&0xff)
}

// With the running Neovim's default colours (0.7.2's magenta floats
// included), every plan and subagent group's text differs from what it is
// drawn on, and in RGB the contrast ratio is at least 2.5.
func TestHighlightGroupsReadableOnDefaultColours(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `require("fido.highlights").setup()`)
	names := []string{"FidoPlanPending", "FidoPlanInProgress", "FidoPlanBlocked", "FidoPlanDone", "FidoPlanHeader",
		"FidoPlanMeta", "FidoPlanNormal", "FidoPlanBorder", "FidoSubagent"}
	normalOf := map[string]string{}
	for _, name := range names {
		if name != "FidoSubagent" {
			normalOf[name] = "FidoPlanNormal" // drawn in the plan window
		}
	}
	var res []struct {
		Name string `msgpack:"name"`
		RGB  bool   `msgpack:"rgb"`
		Fg   string `msgpack:"fg"`
		Bg   string `msgpack:"bg"`
		Fgn  int    `msgpack:"fgn"`
		Bgn  int    `msgpack:"bgn"`
	}
	n.Lua(t, &res, hlContrast, names, normalOf)
	require.Len(t, res, 2*len(names))
	for _, r := range res {
		assert.NotEqual(t, r.Fg, r.Bg, "%s (rgb=%v): foreground equals background", r.Name, r.RGB)
		if r.RGB && r.Fgn >= 0 && r.Bgn >= 0 {
			a, b := luminance(r.Fgn)+0.05, luminance(r.Bgn)+0.05
			assert.GreaterOrEqual(t, math.Max(a, b)/math.Min(a, b), 2.5, "%s: %06x on %06x", r.Name, r.Fgn, r.Bgn)
		}
	}
}
