-- Reviewing Fido's file changes: the preview float shown while the edit
-- approval picker asks (/edits review).
local M = {}

local api = vim.api

local preview = { win = nil, buf = nil }

--- Closes the preview float (scheduled; safe to call when none is open).
function M.close_preview()
  vim.schedule(function()
    if preview.win and api.nvim_win_is_valid(preview.win) then
      pcall(api.nvim_win_close, preview.win, true)
    end
    if preview.buf and api.nvim_buf_is_valid(preview.buf) then
      pcall(api.nvim_buf_delete, preview.buf, { force = true })
    end
    preview.win, preview.buf = nil, nil
  end)
end

--- Shows a proposed change (a unified diff) in a float with 'filetype' diff
--- above the editor, until close_preview() (scheduled).
function M.preview(title, diff)
  vim.schedule(function()
    if preview.win and api.nvim_win_is_valid(preview.win) then
      pcall(api.nvim_win_close, preview.win, true)
    end
    local lines = vim.split(diff, "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    table.insert(lines, 1, "# " .. title)
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    api.nvim_buf_set_option(buf, "modifiable", false)
    api.nvim_buf_set_option(buf, "bufhidden", "wipe")
    api.nvim_buf_set_option(buf, "filetype", "diff")
    local width = math.max(20, math.min(vim.o.columns - 4, 120))
    local height = math.max(3, math.min(#lines, vim.o.lines - vim.o.cmdheight - 8))
    local win = api.nvim_open_win(buf, false, {
      relative = "editor",
      row = 1,
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
      width = width,
      height = height,
      style = "minimal",
      border = "rounded",
      zindex = 45,
    })
    api.nvim_win_set_option(win, "wrap", false)
    preview.win, preview.buf = win, buf
    vim.cmd("redraw")
  end)
end

--- The preview float's window and buffer (for tests), or nil.
function M.preview_win()
  if preview.win and api.nvim_win_is_valid(preview.win) then
    return preview.win, preview.buf
  end
  return nil
end

return M
