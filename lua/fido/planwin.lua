-- The plan float: a window on the `fido://plan` buffer at the editor's
-- top-right. Go computes everything (geometry, wrapped lines, highlight
-- spans; see nvim/planview.go); apply() only puts a payload on screen, in one
-- go, and reports the user hiding it. (fido.host sends fido_resize on
-- VimResized; the host answers with a new payload.)
local M = {}

local api = vim.api
local highlights = require("fido.highlights")
local host = require("fido.host")
local status = require("fido.status")

local ns = api.nvim_create_namespace("fido_plan")
local BUF_NAME = "fido://plan"

local state = {
  buf = nil, -- the fido://plan buffer
  win = nil, -- the float, while shown
  payload = nil, -- the last payload applied
  closing = false, -- true while we close the float ourselves
}

local function notify_host(method, ...)
  local c = host.chan()
  if c then
    pcall(vim.rpcnotify, c, method, ...)
  end
end

local function win_valid()
  return state.win ~= nil and api.nvim_win_is_valid(state.win)
end

local function find_buf()
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(b) and api.nvim_buf_get_name(b) == BUF_NAME then
      return b
    end
  end
  return nil
end

local function ensure_buf()
  if state.buf and api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  local buf = find_buf()
  if not buf then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, BUF_NAME)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "fidoplan"
  vim.bo[buf].modifiable = false
  vim.bo[buf].undolevels = -1 -- rewritten with each plan: no history to keep
  for _, lhs in ipairs({ "q", "<Esc>" }) do
    vim.keymap.set("n", lhs, function()
      M.hide()
    end, { buffer = buf, nowait = true, silent = true, desc = "Hide the Fido plan" })
  end
  state.buf = buf
  return buf
end

-- Lines and highlight extmarks, replacing what was there.
local function set_content(buf, lines, highlights)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(highlights) do
    local line = lines[h.line + 1]
    if line and type(h.group) == "string" and h.group ~= "" then
      local len = #line
      local s = math.max(0, math.min(h.col_start or 0, len))
      local e = h.col_end
      if type(e) ~= "number" or e < 0 or e > len then
        e = len
      end
      if e > s then
        api.nvim_buf_set_extmark(buf, ns, h.line, s, {
          end_row = h.line,
          end_col = e,
          hl_group = h.group,
          priority = 200,
        })
      end
    end
  end
end

-- The first line (1-based) of the item in progress, from its highlight.
local function in_progress_line(highlights)
  for _, h in ipairs(highlights) do
    if h.group == "FidoPlanInProgress" then
      return h.line + 1
    end
  end
  return nil
end

-- When the float is not focused, show the top (header and progress) if the
-- item in progress fits below it with a few of its lines; otherwise scroll
-- it near the top (one line of context above it).
local function scroll(win, nlines, height, highlights)
  local target = in_progress_line(highlights)
  local top = 1
  if target and nlines > height and target + 3 > height then
    top = math.max(1, math.min(target - 1, nlines - height + 1))
  end
  api.nvim_win_call(win, function()
    vim.fn.winrestview({ topline = top, lnum = math.max(top, target or 1), col = 0 })
  end)
end

local function close_win()
  if win_valid() then
    state.closing = true
    pcall(api.nvim_win_close, state.win, true)
    state.closing = false
  end
  state.win = nil
end

local function on_closed_by_user()
  state.win = nil
  notify_host("fido_plan_hidden")
end

-- Watch the float: closed by any means other than apply() (`:q`,
-- `<C-w>c`) counts as the user hiding it; leaving it makes it unfocusable
-- again.
local function watch(win)
  local group = api.nvim_create_augroup("FidoPlanWin", { clear = true })
  api.nvim_create_autocmd("WinClosed", {
    group = group,
    pattern = tostring(win),
    once = true,
    callback = function()
      if state.win == win and not state.closing then
        vim.schedule(on_closed_by_user)
      end
    end,
  })
  api.nvim_create_autocmd("WinLeave", {
    group = group,
    buffer = state.buf,
    callback = function()
      if state.win == win then
        vim.schedule(function()
          if api.nvim_win_is_valid(win) and api.nvim_get_current_win() ~= win then
            pcall(api.nvim_win_set_config, win, { focusable = false })
            M.refresh() -- back to the compact form if a turn runs
          end
        end)
      end
    end,
  })
end

--- Shows, updates or hides the plan float.
--- payload: { visible, focus, overlay, row, col, width, height, lines, highlights }
function M.apply(payload)
  -- Focus is a one-shot request: re-applying (refresh) must not move the
  -- cursor again.
  state.payload = type(payload) == "table" and vim.tbl_extend("force", payload, { focus = false }) or payload
  if type(payload) ~= "table" or not payload.visible then
    close_win()
    return
  end
  local buf = ensure_buf()
  local focus = payload.focus == true
  -- Keep it focusable while the user is inside it (a later update must not
  -- throw them out); it becomes unfocusable again when they leave.
  local inside = win_valid() and api.nvim_get_current_win() == state.win
  -- While a turn runs and the user is not reading the plan, the compact form
  -- (header, item in progress with its next action, blocked items) keeps
  -- two thirds of the transcript, where the answer streams, uncovered.
  local form = payload
  local compact = payload.compact
  if type(compact) == "table" and not focus and not inside and M.running() then
    form = compact
  end
  state.compact = form ~= payload
  local lines = type(form.lines) == "table" and form.lines or {}
  if #lines == 0 then
    lines = { "" }
  end
  local highlights = type(form.highlights) == "table" and form.highlights or {}
  local config = {
    relative = "editor",
    anchor = "NE",
    row = payload.row or 1,
    col = payload.col or vim.o.columns,
    width = math.max(1, payload.width or 1),
    height = math.max(1, form.height or 1),
    focusable = focus or inside,
    zindex = 50,
    style = "minimal",
    border = "rounded",
  }

  set_content(buf, lines, highlights)
  if win_valid() then
    api.nvim_win_set_config(state.win, config)
  else
    config.noautocmd = true
    state.win = api.nvim_open_win(buf, false, config)
    watch(state.win)
  end
  local win = state.win
  local wo = vim.wo[win]
  wo.winhighlight = "Normal:FidoPlanNormal,NormalFloat:FidoPlanNormal,FloatBorder:FidoPlanBorder"
  wo.wrap = true
  wo.linebreak = true
  wo.scrolloff = 0
  wo.cursorline = false
  wo.foldenable = false
  if focus then
    api.nvim_set_current_win(win)
  elseif not inside then
    scroll(win, #lines, config.height, highlights)
  end
end

--- Whether a turn runs (the compact form is shown then).
---@return boolean
function M.running()
  local st = status.get().state
  return st ~= nil and st ~= "idle"
end

--- Whether the float shows the compact form.
function M.compact()
  return win_valid() and state.compact == true
end

--- Hides the float at the user's request and tells the host, which keeps
--- it hidden until :FidoPlan or /plan shows it again.
function M.hide()
  local was = win_valid()
  close_win()
  if was then
    notify_host("fido_plan_hidden")
  end
end

--- Closes the float without telling the host (the layout closing, /quit):
--- the plan is not hidden by the user, and refresh() shows it again.
function M.close()
  close_win()
end

--- The float's window id, or nil when it is not shown.
function M.win()
  if win_valid() then
    return state.win
  end
  return nil
end

--- The fido://plan buffer, or nil before the first plan was shown.
function M.buf()
  if state.buf and api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  return nil
end

--- The last payload applied.
function M.payload()
  return state.payload
end

--- Re-applies the last payload (e.g. after the layout was rebuilt).
function M.refresh()
  if state.payload then
    M.apply(state.payload)
  end
end

highlights.setup()

-- The float is compact while a turn runs, full when idle.
local was_running = M.running()
status.on_change(function()
  local running = M.running()
  if running ~= was_running then
    was_running = running
    M.refresh()
  end
end)

return M
