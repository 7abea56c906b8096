-- Completion in the input buffer ('omnifunc', <C-x><C-o>): slash commands at
-- the start of the input, "@path" mentions anywhere.
local M = {}

local mentions = require("fido.mentions")
local slash = require("fido.slash")

local function candidates(base)
  if base:sub(1, 1) == "@" then
    return mentions.complete(base)
  end
  if base:sub(1, 1) == "/" then
    local out, seen = {}, {}
    for _, c in ipairs(slash.names) do
      if c:sub(1, #base) == base then
        seen[c] = true
        table.insert(out, c)
      end
    end
    for _, c in ipairs(slash.all()) do
      if not seen[c.name] and c.name:sub(1, #base) == base then
        table.insert(out, { word = c.name, menu = c.args, info = c.help })
      end
    end
    return out
  end
  return {}
end

--- The 'omnifunc' protocol: findstart=1 returns the column where the word
--- starts (-3 to cancel); then base is completed.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line()
    local col = vim.api.nvim_win_get_cursor(0)[2]
    local start = col
    while start > 0 and not line:sub(start, start):match("%s") do
      start = start - 1
    end
    local word = line:sub(start + 1, col)
    local ch = word:sub(1, 1)
    if ch == "@" or (ch == "/" and vim.api.nvim_win_get_cursor(0)[1] == 1 and line:sub(1, start):match("^%s*$")) then
      return start
    end
    return -3
  end
  return candidates(base)
end

return M
