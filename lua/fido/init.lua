-- Fido's public Lua API.
local M = {}

local config = require("fido.config")

--- Merges opts into the defaults (validated; a wrong type is reported and
--- the previous configuration is kept).
function M.setup(opts)
  local err = config.set(opts)
  if err then
    vim.notify("Fido: " .. err, vim.log.levels.ERROR, { title = "Fido" })
    return false
  end
  return true
end

--- The status snapshot the host pushes with every flush:
--- { state, model, reasoning, edits ("auto" | "review"), usage = {calls,input,output,cache_read,cost},
---   subagent_usage = {...}, plan = <normalized plan or nil>,
---   subagent = nil or {agent_id, phase, detail, elapsed_ms},
---   waiting = nil or "approval" or "question" }
function M.status()
  local st = require("fido.bridge").status()
  -- "approval" or "question" while one waits or is open (fido.questions).
  st.waiting = require("fido.questions").pending()
  return st
end

--- Opens (or focuses) the transcript and input windows, and starts the host
--- so the statusline, a restored plan and configuration problems show at once.
function M.open(enter)
  local twin, iwin = require("fido.layout").open(enter)
  require("fido.host").ensure()
  return twin, iwin
end

--- Sends text (a prompt or a /command) to the host, starting it if needed.
function M.submit(text)
  -- @buffer, @diagnostics, @quickfix, @selection: what the editor knows,
  -- attached as it is now.
  if not text:match("^%s*/") then
    text = require("fido.context").expand(text)
  end
  return require("fido.host").notify("fido_submit", text)
end

--- Cancels the running turn and any subagent.
function M.cancel()
  -- The host hears of the cancel first (notifications arrive in order), so a
  -- pending approval ends as cancelled, not as the dismissal that closing
  -- its picker sends next.
  if require("fido.host").chan() then
    require("fido.host").notify("fido_cancel")
  end
  -- Any open question's picker closes at once.
  require("fido.questions").cancel_all()
end

--- :FidoPlan [arg]: "" shows and focuses the plan window, "clear" clears it.
function M.plan(arg)
  return require("fido.host").notify("fido_plan", arg or "")
end

-- The statusline --------------------------------------------------------

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
      local layout = require("fido.layout")
      local w = layout.transcript_win()
      if vim.o.laststatus == 3 then
        local cur = vim.api.nvim_get_current_win()
        if cur == w or cur == layout.input_win() then
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

--- Called by the bridge with each new status: animates the spinner only
--- while a turn runs.
local last_running = false

function M.status_changed(st)
  if st.state == "idle" then
    stop_spinner()
  else
    start_spinner()
  end
  -- The plan float is compact while a turn runs, full when idle.
  local running = st.state ~= "idle"
  if running ~= last_running then
    last_running = running
    pcall(function()
      require("fido.planwin").refresh()
    end)
  end
  -- All statuslines: the user's own may show require("fido").status().
  vim.cmd("redrawstatus!")
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
function M.statusline_segments()
  local st = M.status()
  local u = st.usage or {}
  local state = st.state or "idle"
  local label = state == "idle" and "● idle" or (spinner[spin.frame] .. " " .. state)
  local questions = require("fido.questions")
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
  local mcp_marker = require("fido.mcp").marker()
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
  local segs = M.statusline_segments()
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
function M.statusline(width)
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
function M.input_status()
  if vim.o.laststatus ~= 3 then
    return ""
  end
  hints_width = hints_width or vim.fn.strdisplaywidth(require("fido.layout").INPUT_HINTS)
  local l, r = fit(math.max(20, vim.o.columns - hints_width - 2))
  return l .. "  " .. r
end

return M
