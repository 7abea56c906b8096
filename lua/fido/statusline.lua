-- Fido's statuslines: the transcript window's (model, reasoning, turn state
-- with a spinner, calls, tokens, cost), fitted to its width by dropping the
-- least important parts whole, and the input window's right part when the
-- statusline is global. Also what status() returns.
local M = {}

local layout = require("fido.layout")
local mcp = require("fido.mcp")
local questions = require("fido.questions")
local status = require("fido.status")
local windows = require("fido.windows")

local spinner = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local spin = { frame = 1, timer = nil }

local function stop_spinner()
  if spin.timer then
    spin.timer:stop()
    spin.timer:close()
    spin.timer = nil
  end
end

local function start_spinner()
  if spin.timer then
    return
  end
  spin.timer = vim.loop.new_timer()
  spin.timer:start(
    100,
    100,
    vim.schedule_wrap(function()
      spin.frame = spin.frame % #spinner + 1
      -- Only Fido's statuslines show the spinner: redraw just the
      -- transcript's, or the global one while it is Fido's (laststatus=3:
      -- drawn for the current window, the transcript or the input).
      local w = windows.transcript_win()
      if vim.o.laststatus == 3 then
        local cur = vim.api.nvim_get_current_win()
        if cur == w or cur == windows.input_win() then
          vim.cmd("redrawstatus")
        end
      elseif w then
        vim.api.nvim_win_call(w, function()
          vim.cmd("redrawstatus")
        end)
      end
    end)
  )
end

-- Each new status: the spinner turns only while a turn runs; every
-- statusline is redrawn (the user's own may show require("fido").status()).
-- Whatever shows a status loads this module first, which starts the
-- spinner at once when a turn is running then.
status.on_change(function(st)
  if st.state == "idle" then
    stop_spinner()
  else
    start_spinner()
  end
  vim.cmd("redrawstatus!")
end)
if status.get().state ~= "idle" then
  start_spinner()
end

--- The status snapshot with what waits for the user (see init.lua's status()).
---@return fido.Status
function M.status()
  local st = status.get()
  -- "approval" or "question" while one waits or is open (fido.questions).
  st.waiting = questions.pending()
  return st
end

local function tokens(n)
  n = tonumber(n) or 0
  if n >= 1e6 then
    return string.format("%.1fM", n / 1e6)
  elseif n >= 1e4 then
    return string.format("%.0fk", n / 1e3)
  elseif n >= 1e3 then
    return string.format("%.1fk", n / 1e3)
  end
  return tostring(math.floor(n))
end

local function esc(s)
  return (tostring(s or ""):gsub("%%", "%%%%"))
end

local SEP = " · "

local function width_of(s)
  return vim.fn.strdisplaywidth(s)
end

--- The segments of the transcript's statusline, each { text, prio, side }
--- (prio 1 is kept longest): turn state, model, cost, tokens, then the rest.
---@return { text: string, prio: integer, side: "left"|"right"|"state"|"sub" }[]
function M.segments()
  local st = M.status()
  local u = st.usage or {}
  local state = st.state or "idle"
  local label = state == "idle" and "● idle" or (spinner[spin.frame] .. " " .. state)
  local waiting = questions.pending()
  if waiting then
    label = "? waiting for " .. (waiting == "approval" and "approval" or "your answer")
    local hint = questions.waiting_hint()
    if hint then
      label = label .. ": " .. hint
    end
  end
  local segs = {
    { text = st.model ~= "" and st.model or "fido", prio = 2, side = "left" },
  }
  if st.reasoning and st.reasoning ~= "" then
    table.insert(segs, { text = st.reasoning, prio = 7, side = "left" })
  end
  if st.edits == "review" then
    table.insert(segs, { text = "review", prio = 2, side = "left" })
  end
  if st.mode and st.mode ~= "" and st.mode ~= "default" then
    table.insert(segs, { text = st.mode, prio = 2, side = "left" })
  end
  local sandbox = type(st.sandbox) == "table" and st.sandbox.state or ""
  if sandbox == "off" or sandbox == "unavailable" then
    table.insert(segs, { text = "NOT sandboxed", prio = 2, side = "left" })
  elseif sandbox == "on" or sandbox == "auto" then
    table.insert(segs, { text = sandbox == "auto" and "sandbox auto" or "sandboxed", prio = 6, side = "left" })
  end
  table.insert(segs, { text = label, prio = 1, side = "state" })
  local mcp_marker = mcp.marker()
  if mcp_marker ~= "" then
    table.insert(segs, { text = mcp_marker, prio = 1, side = "left" })
  end
  vim.list_extend(segs, {
    { text = string.format("%d calls", tonumber(u.calls) or 0), prio = 6, side = "right" },
    { text = string.format("in %s · out %s", tokens(u.input), tokens(u.output)), prio = 4, side = "right" },
    {
      text = "cache "
        .. tokens(u.cache_read)
        .. ((tonumber(u.cache_write) or 0) > 0 and (" +" .. tokens(u.cache_write) .. " written") or ""),
      prio = 5,
      side = "right",
    },
    { text = string.format("$%.4f", tonumber(u.cost) or 0), prio = 3, side = "right" },
  })
  local ctx = st.context or {}
  if (tonumber(ctx.limit) or 0) > 0 then
    local pct = math.floor(100 * (tonumber(ctx.used) or 0) / tonumber(ctx.limit) + 0.5)
    table.insert(segs, { text = string.format("ctx %d%%", pct), prio = 4, side = "right" })
  end
  local su = st.subagent_usage or {}
  if (tonumber(su.calls) or 0) > 0 then
    table.insert(segs, {
      text = string.format("(sub %d · $%.4f)", tonumber(su.calls) or 0, tonumber(su.cost) or 0),
      prio = 8,
      side = "sub",
    })
  end
  return segs
end

-- Lays out the kept segments: " model · reasoning  state  %=calls · … · $cost (sub …) ".
local function compose(segs, keep)
  local left, right, state, sub = {}, {}, "", ""
  for i, sg in ipairs(segs) do
    if keep[i] then
      if sg.side == "left" then
        table.insert(left, sg.text)
      elseif sg.side == "right" then
        table.insert(right, sg.text)
      elseif sg.side == "state" then
        state = sg.text
      else
        sub = sg.text
      end
    end
  end
  local l = table.concat(left, SEP)
  if state ~= "" then
    l = l ~= "" and (l .. "  " .. state) or state
  end
  local r = table.concat(right, SEP)
  if sub ~= "" then
    r = r ~= "" and (r .. " " .. sub) or sub
  end
  return " " .. l, r ~= "" and (r .. " ") or ""
end

-- The status's left and right parts: the segments that fit in width,
-- lower-priority ones dropped whole, so nothing is cut mid-word and the
-- turn state goes last.
local function fit(width)
  local segs = M.segments()
  local keep = {}
  for i = 1, #segs do
    keep[i] = true
  end
  local order = {}
  for i = 1, #segs do
    order[i] = i
  end
  table.sort(order, function(a, b)
    return segs[a].prio > segs[b].prio
  end)
  local l, r = compose(segs, keep)
  for _, i in ipairs(order) do
    if width_of(l) + (r ~= "" and 2 + width_of(r) or 0) <= width or segs[i].prio == 1 then
      break
    end
    keep[i] = false
    l, r = compose(segs, keep)
  end
  return esc(l), esc(r)
end

--- The transcript window's statusline, fitted to width (default: the
--- window being drawn).
---@param width integer?
---@return string
function M.render(width)
  if not width then
    local w = vim.g.statusline_winid
    width = (w and w ~= 0 and vim.api.nvim_win_is_valid(w)) and vim.api.nvim_win_get_width(w) or vim.o.columns
  end
  local l, r = fit(width)
  return l .. "  %=" .. r
end

local hints_width -- of layout.INPUT_HINTS, measured once (input_status runs on every redraw)

--- The input window's statusline ends with this. With a global statusline
--- (laststatus=3) the transcript's is seen only while the transcript is the
--- current window, so the input's shows the same status beside its hints,
--- in the width they leave; otherwise nothing.
---@return string
function M.input_status()
  if vim.o.laststatus ~= 3 then
    return ""
  end
  hints_width = hints_width or vim.fn.strdisplaywidth(layout.INPUT_HINTS)
  local l, r = fit(math.max(20, vim.o.columns - hints_width - 2))
  return l .. "  " .. r
end

return M
