package nvim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// fakeLualine reproduces what lualine.nvim does to other windows' options.
// The real plugin cannot be fetched in CI (no network beyond the Go proxy,
// apt and npm), so this fake mirrors its behaviour as read in its source:
// setup() sets a global 'statusline' when none is set, then on a timer
// (refresh.statusline ms) and on window/buffer events it sets every
// non-popup window's local 'statusline' (and 'winbar' when a lualine winbar
// is configured) to its own rendered string, remembering the window's
// previous value; windows whose filetype is in disabled_filetypes are left
// alone (or get the remembered value back). get_config() returns a copy.
const fakeLualine = `
local M = {}
local config = { options = { disabled_filetypes = { statusline = {}, winbar = {} }, refresh = { statusline = 30 } }, winbar = {} }
local prev = {}
local timer
local function disabled(kind, win)
  local ft = vim.bo[vim.api.nvim_win_get_buf(win)].filetype
  return vim.tbl_contains(config.options.disabled_filetypes[kind] or {}, ft)
end
-- The window's own value, not the global one it falls back to (vim.wo[win]
-- reads the local value on 0.7, the effective one from 0.10, where
-- vim.wo[win][0] is the local one).
local function local_value(win, kind)
  if vim.fn.has("nvim-0.10") == 1 then return vim.wo[win][0][kind] end
  return vim.wo[win][kind]
end
local function set(win, kind, val)
  local cur = local_value(win, kind)
  if cur == val then return end
  prev[win] = prev[win] or {}
  if not tostring(cur):find("lualine") then prev[win][kind] = cur end
  vim.wo[win][kind] = val
end
function M.refresh()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.fn.win_gettype(win) ~= "popup" then
      local kinds = { "statusline" }
      if vim.fn.exists("+winbar") == 1 and next(config.winbar) then table.insert(kinds, "winbar") end
      for _, kind in ipairs(kinds) do
        local last = prev[win] and prev[win][kind]
        if not disabled(kind, win) then
          set(win, kind, "%#lualine_c_normal# lualine " .. kind)
        elseif last ~= nil then
          set(win, kind, last)
        end
      end
    end
  end
end
function M.setup(cfg)
  config = vim.tbl_deep_extend("force", config, cfg or {})
  if vim.go.statusline == "" then vim.go.statusline = "%#Normal#" end
  if timer then timer:stop() end
  timer = vim.loop.new_timer()
  timer:start(0, config.options.refresh.statusline, vim.schedule_wrap(M.refresh))
  vim.api.nvim_create_autocmd({ "WinEnter", "BufEnter", "FileType", "VimResized" }, {
    group = vim.api.nvim_create_augroup("fake_lualine", { clear = true }),
    callback = function() vim.schedule(M.refresh) end,
  })
end
function M.get_config() return vim.deepcopy(config) end
return M
`

func startWithLualine(t *testing.T) *nvimtest.Nvim {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lua"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lua", "lualine.lua"), []byte(fakeLualine), 0o644))
	n := nvimtest.Start(t, nvimtest.Options{Args: []string{"--cmd", "set rtp+=" + dir}})
	n.Lua(t, nil, `_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, msg) end`)
	return n
}

const fidoWindowOptions = `local tw = require("fido.layout").transcript_win()
local iw = require("fido.layout").input_win()
return { stl = vim.wo[tw].statusline, istl = vim.wo[iw].statusline,
  wb = vim.fn.exists("+winbar") == 1 and vim.wo[tw].winbar or "n/a" }`

type fidoWinOpts struct {
	Stl  string `msgpack:"stl"`
	Istl string `msgpack:"istl"`
	Wb   string `msgpack:"wb"`
}

// With lualine as users set it up (a statusline and a winbar), Fido says
// once what to add, :checkhealth fido shows the exact disabled_filetypes
// line, and with that line Fido's windows keep their own statusline and the
// subagent winbar across lualine's refreshes.
func TestLualineLeavesFidoWindowsWithTheDocumentedLine(t *testing.T) {
	t.Parallel()
	n := startWithLualine(t)
	n.Lua(t, nil, `require("lualine").setup({ winbar = { lualine_c = { "filename" } } })`)
	n.Lua(t, nil, `require("fido.layout").open(false)`)
	n.WaitFor(t, `vim.wo[require("fido.layout").transcript_win()].statusline:find("lualine") ~= nil`, 2*time.Second)
	n.WaitFor(t, `#_G.notes == 1`, 2*time.Second, `_G.notes`)
	require.NoError(t, n.Command("checkhealth fido"))
	var health string
	n.Lua(t, &health, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	var line string
	n.Lua(t, &line, `return require("fido.health").LUALINE_LINE`)
	assert.Contains(t, health, "lualine replaces the statusline")
	assert.Contains(t, health, line, "the exact line to add")
	require.NoError(t, n.Command("close"))

	// The user adds the line (as the docs say); Fido reopens its windows.
	n.Lua(t, nil, "require(\"fido.layout\").close(); "+line)
	n.Lua(t, nil, `require("fido.layout").open(false)
require("fido.activity").apply({ visible = true, text = "SUBAGENT abcd1234 · running · 1.0s", group = "FidoSubagent" })`)
	time.Sleep(200 * time.Millisecond) // several lualine refreshes
	var o fidoWinOpts
	n.Lua(t, &o, fidoWindowOptions)
	assert.Equal(t, "%!v:lua.require'fido'.statusline()", o.Stl)
	assert.True(t, strings.HasPrefix(o.Istl, " Fido input"), o.Istl)
	if o.Wb != "n/a" {
		assert.Contains(t, o.Wb, "SUBAGENT abcd1234 · running")
	}
	require.NoError(t, n.Command("checkhealth fido"))
	n.Lua(t, &health, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	assert.Contains(t, health, "lualine leaves Fido's windows alone")
}
