-- The subagent activity bar: one line of sanitized lifecycle text (built in
-- Go, see nvim/activity.go) at the top of the transcript window. Where the
-- editor has 'winbar' (0.8+) it is the transcript window's winbar; on 0.7 it
-- is a one-line, unfocusable float pinned to the top of that window. It never
-- takes focus or the input.
local M = {}

local api = vim.api
local highlights = require("fido.highlights")
local windows = require("fido.windows")
local has_winbar = vim.fn.exists("+winbar") == 1

local state = {
  payload = nil, -- the last payload applied
  bar_win = nil, -- window whose winbar we set (0.8+)
  saved_winbar = nil, -- its local winbar before we set it
  last_bar = nil, -- the winbar string we set
  float = nil, -- the 0.7 float
  float_buf = nil,
}

-- The transcript window, or nil when the layout is not open.
local function transcript_win()
  local w = windows.transcript_win()
  if w and api.nvim_win_is_valid(w) then
    return w
  end
  return nil
end

local function visible(p)
  return type(p) == "table" and p.visible == true and type(p.text) == "string"
end

local function group_of(p)
  if type(p.group) == "string" and p.group:match("^[%w_]+$") then
    return p.group
  end
  return "FidoSubagent"
end

-- Statusline syntax treats % specially; the text is plain.
local function escape(text)
  return (text:gsub("%%", "%%%%"))
end

local SEP = " · "

-- Splits "SUBAGENT <id> · <phase> · <detail> · <elapsed>" into the part
-- that must stay (head, up to and including the phase's separator), the
-- detail, and the tail (" · <elapsed>"). Without a detail, detail and tail
-- are empty and head is the whole text.
local function split(text)
  local a = text:find(SEP, 1, true)
  local b = a and text:find(SEP, a + #SEP, true)
  if not b then
    return text, "", ""
  end
  local last, i = b, b
  while true do
    local j = text:find(SEP, i + 1, true)
    if not j then
      break
    end
    last, i = j, j
  end
  if last == b then
    return text, "", ""
  end
  return text:sub(1, b + #SEP - 1), text:sub(b + #SEP, last - 1), text:sub(last)
end

local function truncate(s, cells)
  local out, used = {}, 0
  for i = 0, vim.fn.strchars(s) - 1 do
    local ch = vim.fn.strcharpart(s, i, 1)
    local w = vim.fn.strdisplaywidth(ch)
    if used + w > cells then
      break
    end
    table.insert(out, ch)
    used = used + w
  end
  return table.concat(out)
end

-- The text fitted into width cells: only the detail shrinks (then goes);
-- "SUBAGENT <id> · <phase>" and the elapsed time stay.
local function fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local head, detail, tail = split(text)
  if detail == "" then
    return text
  end
  local room = width - vim.fn.strdisplaywidth(head) - vim.fn.strdisplaywidth(tail)
  if room >= 4 then
    return head .. vim.trim(truncate(detail, room - 1)) .. "…" .. tail
  end
  return head:sub(1, #head - #SEP) .. tail
end

-- 0.8+: the winbar -------------------------------------------------------

-- Window-local winbar (never the global value).
local function get_local_winbar(w)
  return api.nvim_win_call(w, function()
    return api.nvim_get_option_value("winbar", { scope = "local" })
  end)
end

local function set_local_winbar(w, value)
  api.nvim_win_call(w, function()
    api.nvim_set_option_value("winbar", value, { scope = "local" })
  end)
end

-- Removes our bar: the window we set it on gets its previous winbar back;
-- windows split from it (which copied the bar) get an empty local winbar.
local function restore_winbar()
  local ours = state.last_bar
  if ours then
    for _, w in ipairs(api.nvim_list_wins()) do
      local ok, value = pcall(get_local_winbar, w)
      if ok and w ~= state.bar_win and value == ours then
        pcall(set_local_winbar, w, "")
      end
    end
  end
  local w = state.bar_win
  if w and api.nvim_win_is_valid(w) then
    pcall(set_local_winbar, w, state.saved_winbar or "")
  end
  state.bar_win, state.saved_winbar, state.last_bar = nil, nil, nil
end

local function apply_winbar(p, tw)
  if not (visible(p) and tw) then
    restore_winbar()
    return
  end
  if state.bar_win ~= tw then
    local prev_bar = state.last_bar
    restore_winbar()
    local saved = get_local_winbar(tw)
    if saved == prev_bar then
      saved = "" -- copied from our old window, not the user's
    end
    state.saved_winbar, state.bar_win = saved, tw
  end
  -- Fitted to the window (re-fitted when it is resized): only the detail
  -- shrinks or goes, "SUBAGENT <id> · <phase>" and the elapsed time stay.
  -- %= fills the rest of the bar with the group, so it reads as a bar.
  local text = fit(p.text, math.max(1, api.nvim_win_get_width(tw) - 2))
  local bar = "%#" .. group_of(p) .. "# " .. escape(text) .. " %=%*"
  set_local_winbar(tw, bar)
  state.last_bar = bar
end

-- 0.7: a one-line float --------------------------------------------------

local function close_float()
  if state.float and api.nvim_win_is_valid(state.float) then
    pcall(api.nvim_win_close, state.float, true)
  end
  state.float = nil
end

local function float_buf()
  if state.float_buf and api.nvim_buf_is_valid(state.float_buf) then
    return state.float_buf
  end
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "fidoactivity"
  vim.bo[buf].undolevels = -1 -- rewritten every tick: no history to keep
  state.float_buf = buf
  return buf
end

local function apply_float(p, tw)
  if not (visible(p) and tw) then
    close_float()
    return
  end
  local buf = float_buf()
  vim.bo[buf].modifiable = true
  local width = math.max(1, api.nvim_win_get_width(tw))
  api.nvim_buf_set_lines(buf, 0, -1, false, { " " .. fit(p.text, width - 1) })
  vim.bo[buf].modifiable = false
  local config = {
    relative = "win",
    win = tw,
    anchor = "NW",
    row = 0,
    col = 0,
    width = width,
    height = 1,
    focusable = false,
    zindex = 60,
    style = "minimal",
    border = "none",
  }
  local f = state.float
  if f and api.nvim_win_is_valid(f) then
    -- A float relative to a window moves with it; when reconfiguring fails
    -- (its window went away underneath it), open a new one.
    local ok = pcall(api.nvim_win_set_config, f, config)
    if not ok then
      close_float()
    end
  end
  if not (state.float and api.nvim_win_is_valid(state.float)) then
    config.noautocmd = true
    state.float = api.nvim_open_win(buf, false, config)
  end
  local g = group_of(p)
  local wo = vim.wo[state.float]
  wo.winhighlight = "Normal:" .. g .. ",NormalFloat:" .. g .. ",EndOfBuffer:" .. g
  wo.wrap = false
end

local function render()
  local p, tw = state.payload, transcript_win()
  if has_winbar then
    apply_winbar(p, tw)
  else
    apply_float(p, tw)
  end
end

--- Shows (payload.visible) or hides the bar. payload: { visible, text, group }.
--- Safe before the layout exists: the payload is kept and shown on refresh().
function M.apply(payload)
  state.payload = payload
  render()
end

--- Re-applies the last payload (the layout opened, moved or resized).
function M.refresh()
  render()
end

--- The 0.7 float's window id, or nil.
function M.float()
  if state.float and api.nvim_win_is_valid(state.float) then
    return state.float
  end
  return nil
end

--- Whether this Neovim shows the bar in the winbar (else in a float).
function M.uses_winbar()
  return has_winbar
end

highlights.setup()

-- Keep the bar fitted to the transcript window (and the 0.7 float on its
-- top row). WinScrolled also fires when a window is resized before 0.9,
-- which added WinResized.
do
  local group = api.nvim_create_augroup("FidoActivity", { clear = true })
  if has_winbar then
    -- Only a resize re-fits the winbar (a closed window's bar is dealt with
    -- when the layout reopens, see apply_winbar).
    local events = { "VimResized", "WinScrolled" }
    if vim.fn.exists("##WinResized") == 1 then
      table.insert(events, "WinResized")
    end
    api.nvim_create_autocmd(events, {
      group = group,
      callback = function()
        local w = state.bar_win
        if w and api.nvim_win_is_valid(w) and visible(state.payload) then
          vim.schedule(render)
        end
      end,
    })
  else
    api.nvim_create_autocmd({ "VimResized", "WinScrolled", "WinNew", "WinClosed", "TabEnter" }, {
      group = group,
      callback = function()
        if state.float or visible(state.payload) then
          vim.schedule(render)
        end
      end,
    })
  end
end

return M
