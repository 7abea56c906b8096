-- Where Fido's sidebar is: its transcript and input buffers (fido.layout
-- creates them) and the windows showing them. Surfaces placed on the
-- sidebar (the subagent bar, the statusline's spinner, the questions) find
-- it here without knowing the layout.
local M = {}

local api = vim.api

local bufs = {} -- "transcript" | "input" -> buffer
local wins = {} -- "transcript" | "input" -> the window last seen showing it

--- Remembers the buffer of kind.
---@param kind "transcript"|"input"
---@param buf integer
function M.set_buf(kind, buf)
  bufs[kind] = buf
end

--- The buffer of kind, or nil before it was created (or after it was wiped).
---@param kind "transcript"|"input"
---@return integer?
function M.buf(kind)
  local b = bufs[kind]
  if b ~= nil and api.nvim_buf_is_valid(b) then
    return b
  end
  return nil
end

--- Remembers the window showing kind's buffer.
---@param kind "transcript"|"input"
---@param win integer
function M.set_win(kind, win)
  wins[kind] = win
end

local function find_win(buf)
  for _, w in ipairs(api.nvim_tabpage_list_wins(api.nvim_get_current_tabpage())) do
    if api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
  return nil
end

--- The window showing kind's buffer: the one remembered while it still
--- shows it, else one in the current tab, or nil.
---@param kind "transcript"|"input"
---@return integer?
function M.win(kind)
  local w, b = wins[kind], bufs[kind]
  if w ~= nil and api.nvim_win_is_valid(w) and api.nvim_win_get_buf(w) == b then
    return w
  end
  if M.buf(kind) then
    wins[kind] = find_win(b)
    return wins[kind]
  end
  return nil
end

--- The transcript window, or nil when the sidebar is not open.
---@return integer?
function M.transcript_win()
  return M.win("transcript")
end

--- The input window, or nil when the sidebar is not open.
---@return integer?
function M.input_win()
  return M.win("input")
end

return M
