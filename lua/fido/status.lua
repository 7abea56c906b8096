-- The status snapshot the host pushes with every flush (see init.lua's
-- status()), and the surfaces that follow it: each registers with
-- on_change() and is called after every change, so the modules that set it
-- (the bridge, the host when its job exits) need not know them.
local M = {}

---@class fido.Usage
---@field calls integer
---@field input integer
---@field output integer
---@field cache_read integer
---@field cache_write? integer
---@field cost number

---@class fido.Status
---@field state string turn state: "idle", "connecting", "thinking", "working", "streaming", …
---@field model string
---@field reasoning string
---@field edits? "auto"|"review"
---@field mode? string
---@field usage fido.Usage
---@field subagent_usage fido.Usage
---@field context? { used: integer, limit: integer }
---@field plan? table the normalized plan, or nil
---@field subagent? { agent_id: string, phase: string, detail: string, elapsed_ms: integer }
---@field flushes integer
---@field waiting? "approval"|"question" set by status()

local function usage()
  return { calls = 0, input = 0, output = 0, cache_read = 0, cost = 0 }
end

---@type fido.Status
local current = {
  state = "idle",
  model = "",
  reasoning = "",
  usage = usage(),
  subagent_usage = usage(),
  flushes = 0,
}

local listeners = {}

--- The last snapshot (the table itself: callers read it).
---@return fido.Status
function M.get()
  return current
end

--- Calls fn(status) after every change.
---@param fn fun(st: fido.Status)
function M.on_change(fn)
  table.insert(listeners, fn)
end

local function changed()
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, current)
    if not ok then
      vim.notify("Fido: status: " .. tostring(err), vim.log.levels.ERROR, { title = "Fido" })
    end
  end
end

--- Replaces the snapshot.
---@param st fido.Status
function M.set(st)
  current = st
  changed()
end

--- The host is gone: whatever ran is over.
function M.host_exited()
  current.state = "idle"
  current.subagent = nil
  changed()
end

return M
