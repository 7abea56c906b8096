-- Fido's public Lua API: setup(), the status snapshot for statuslines,
-- opening the sidebar, submitting and cancelling, the plan window, and the
-- statuslines Fido's windows show.
local M = {}

local config = require("fido.config")
local host = require("fido.host")
local layout = require("fido.layout")
local statusline = require("fido.statusline")
local turn = require("fido.turn")

--- Merges opts into the defaults (validated: a wrong type or an unknown
--- option is reported and the previous configuration is kept).
---@param opts? fido.Config
---@return boolean ok
function M.setup(opts)
  local err = config.set(opts)
  if err then
    vim.notify("Fido: " .. err, vim.log.levels.ERROR, { title = "Fido" })
    return false
  end
  return true
end

--- The status snapshot the host pushes with every flush, with what waits
--- for the user: { state, model, reasoning, edits ("auto" | "review"), mode,
--- usage = { calls, input, output, cache_read, cache_write, cost },
--- subagent_usage = { … }, context = { used, limit }, plan = <normalized
--- plan or nil>, subagent = nil or { agent_id, phase, detail, elapsed_ms },
--- waiting = nil or "approval" or "question" }. A plain Lua read, cheap
--- enough for a statusline that redraws often.
---@return fido.Status
function M.status()
  return statusline.status()
end

--- Opens (or focuses) the transcript and input windows, and starts the host
--- so the statusline, a restored plan and configuration problems show at once.
---@param enter? boolean false keeps the cursor where it is (default true)
---@return integer transcript_win, integer input_win
function M.open(enter)
  local twin, iwin = layout.open(enter)
  host.ensure()
  return twin, iwin
end

--- Sends text (a prompt or a /command) to the host, starting it if needed
--- (see fido.turn).
M.submit = turn.submit

--- Cancels the running turn and any subagent.
M.cancel = turn.cancel

--- :FidoPlan [arg]: "" shows and focuses the plan window, "clear" clears it,
--- "hide" hides it, "toggle" shows or hides it.
---@param arg? ""|"clear"|"hide"|"toggle"
---@return boolean sent
function M.plan(arg)
  return host.notify("fido_plan", arg or "")
end

--- The segments of the transcript's statusline, each { text, prio, side }
--- (prio 1 is kept longest): turn state, model, cost, tokens, then the rest.
M.statusline_segments = statusline.segments

--- The transcript window's statusline, fitted to width (default: the
--- window being drawn).
M.statusline = statusline.render

--- The input window's statusline ends with this. With a global statusline
--- (laststatus=3) the transcript's is seen only while the transcript is the
--- current window, so the input's shows the same status beside its hints,
--- in the width they leave; otherwise nothing.
M.input_status = statusline.input_status

return M
