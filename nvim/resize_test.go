package nvim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// resize sets the editor's columns and fires VimResized (0.7 does not fire
// it for :set columns without a UI; 0.10 does, and a second one is harmless).
func resize(t *testing.T, n *nvimtest.Nvim, cols int) {
	t.Helper()
	require.NoError(t, n.Command(fmt.Sprintf("set columns=%d | doautocmd VimResized", cols)))
}

type widths struct {
	Sidebar int `msgpack:"sidebar"`
	Code    int `msgpack:"code"`
}

func layoutWidths(t *testing.T, n *nvimtest.Nvim) widths {
	t.Helper()
	var w widths
	n.Lua(t, &w, `local tw = require("fido.layout").transcript_win()
local code = 1000
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if vim.api.nvim_win_get_config(w).relative == "" and w ~= tw and w ~= require("fido.layout").input_win() then
    code = math.min(code, vim.api.nvim_win_get_width(w))
  end
end
return { sidebar = vim.api.nvim_win_get_width(tw), code = code }`)
	return w
}

// The sidebar keeps its configured share (40%) across resizes both ways,
// <C-w>= leaves it so, and the code window keeps 20 columns at 60.
func TestLayoutKeepsShareAcrossResize(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	resize(t, n, 200)
	n.Lua(t, nil, `require("fido.layout").open(false)`)
	assert.Equal(t, widths{Sidebar: 80, Code: 119}, layoutWidths(t, n))

	resize(t, n, 80)
	assert.Equal(t, widths{Sidebar: 32, Code: 47}, layoutWidths(t, n))
	resize(t, n, 60)
	got := layoutWidths(t, n)
	assert.GreaterOrEqual(t, got.Code, 20, "the code window keeps 20 columns")
	assert.Equal(t, 24, got.Sidebar)
	resize(t, n, 45)
	got = layoutWidths(t, n)
	assert.Equal(t, 20, got.Sidebar)

	resize(t, n, 200)
	assert.Equal(t, widths{Sidebar: 80, Code: 119}, layoutWidths(t, n), "growing back restores the share")

	// <C-w>= from the code window.
	n.Lua(t, nil, `vim.cmd("wincmd t"); vim.cmd("vsplit"); vim.cmd("wincmd =")`)
	got = layoutWidths(t, n)
	assert.Equal(t, 80, got.Sidebar, "<C-w>= keeps the sidebar")
	assert.GreaterOrEqual(t, got.Code, 20)
}

// A sidebar configured wider than the editor allows leaves the code window
// its 20 columns.
func TestLayoutNeverSqueezesCode(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	resize(t, n, 60)
	n.Lua(t, nil, `require("fido").setup({ width = 0.8 }); require("fido.layout").open(false)`)
	got := layoutWidths(t, n)
	assert.GreaterOrEqual(t, got.Code, 20)
	resize(t, n, 100)
	got = layoutWidths(t, n)
	assert.Equal(t, 79, got.Sidebar)
	assert.Equal(t, 20, got.Code)
}
