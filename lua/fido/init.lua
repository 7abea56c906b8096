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
--- { state, model, reasoning, usage = {calls,input,output,cache_read,cost},
---   subagent_usage = {...}, plan = <normalized plan or nil>,
---   subagent = nil or {agent_id, phase, detail, elapsed_ms} }
function M.status()
  return require("fido.bridge").status()
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
  return require("fido.host").notify("fido_submit", text)
end

--- Cancels the running turn and any subagent.
function M.cancel()
  if require("fido.host").chan() then
    require("fido.host").notify("fido_cancel")
  end
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
      -- Only the transcript's statusline shows the spinner: redraw just it.
      local w = require("fido.layout").transcript_win()
      if w then
        vim.api.nvim_win_call(w, function()
          vim.cmd("redrawstatus")
        end)
      end
    end)
  )
end

--- Called by the bridge with each new status: animates the spinner only
--- while a turn runs.
function M.status_changed(st)
  if st.state == "idle" then
    stop_spinner()
  else
    start_spinner()
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

--- The transcript window's statusline: model, reasoning level, spinner and
--- state, calls, input/output/cached tokens, cost.
function M.statusline()
  local st = M.status()
  local u = st.usage or {}
  local model = st.model ~= "" and st.model or "fido"
  local parts = { esc(model) }
  if st.reasoning and st.reasoning ~= "" then
    table.insert(parts, esc(st.reasoning))
  end
  local state = st.state or "idle"
  local label = state == "idle" and "● idle" or (spinner[spin.frame] .. " " .. state)
  -- %< at the start: a narrow window loses the model name first, never the totals.
  local left = " %<" .. table.concat(parts, " · ") .. "  " .. esc(label)
  local mcp_marker = require("fido.mcp").marker()
  if mcp_marker ~= "" then
    left = left .. "  " .. mcp_marker
  end
  local right = string.format(
    "%d calls · in %s · out %s · cache %s · $%.4f",
    tonumber(u.calls) or 0,
    tokens(u.input),
    tokens(u.output),
    tokens(u.cache_read),
    tonumber(u.cost) or 0
  )
  local su = st.subagent_usage or {}
  if (tonumber(su.calls) or 0) > 0 then
    right = string.format("%s (sub %d · $%.4f)", right, tonumber(su.calls) or 0, tonumber(su.cost) or 0)
  end
  return left .. "  %=" .. right .. " "
end

return M
