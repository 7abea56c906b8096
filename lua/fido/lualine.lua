-- lualine and Fido's windows: lualine sets every window's local
-- 'statusline' (and 'winbar' when it has one) on a timer, except for the
-- filetypes it is told to leave alone.
local M = {}

--- The line that keeps lualine off Fido's windows.
M.LINE =
  'require("lualine").setup({ options = { disabled_filetypes = { statusline = { "fido", "fido_input" }, winbar = { "fido" } } } })'

local function contains(list, v)
  for _, x in ipairs(type(list) == "table" and list or {}) do
    if x == v then
      return true
    end
  end
  return false
end

--- When lualine is loaded and would replace Fido's statusline or winbar:
--- the missing "kind:filetype" entries (nil when none or no lualine).
---@return string[]?
function M.missing()
  if not package.loaded["lualine"] then
    return nil
  end
  local ok, cfg = pcall(function()
    return package.loaded["lualine"].get_config()
  end)
  if not ok or type(cfg) ~= "table" then
    return nil
  end
  local d = (cfg.options or {}).disabled_filetypes or {}
  -- Old lualine: one list for both.
  local stl = d[1] ~= nil and d or d.statusline
  local wb = d[1] ~= nil and d or d.winbar
  local missing = {}
  for _, ft in ipairs({ "fido", "fido_input" }) do
    if not contains(stl, ft) then
      table.insert(missing, "statusline:" .. ft)
    end
  end
  if vim.fn.exists("+winbar") == 1 and not contains(wb, "fido") then
    table.insert(missing, "winbar:fido")
  end
  return #missing > 0 and missing or nil
end

return M
