-- /permissions: the command rules in an editable buffer. Deleting a line and
-- :w removes that rule (the host keeps the rest).
local M = {}

local host = require("fido.host")

local NAME = "fido://permissions"

local function buffer()
  local buf = vim.fn.bufnr(NAME)
  if buf ~= -1 and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, NAME)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "conf"
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    buffer = buf,
    callback = function()
      local chan = host.chan()
      if not chan then
        vim.notify("Fido: the host is not running; nothing was changed", vim.log.levels.WARN, { title = "Fido" })
        return
      end
      vim.rpcnotify(chan, "fido_permissions", vim.api.nvim_buf_get_lines(buf, 0, -1, false))
      vim.bo[buf].modified = false
    end,
  })
  return buf
end

--- Shows lines (from the host) in the permissions buffer, in a split.
function M.open(lines)
  local buf = buffer()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return
    end
  end
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_win_set_height(0, math.min(#lines + 1, 15))
end

return M
