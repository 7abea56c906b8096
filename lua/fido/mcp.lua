-- MCP glue: setup({ mcp = … }) handed to the host as JSON (fido.config
-- checks it), and the servers' state the host pushes (for :checkhealth and
-- the statusline).
local M = {}

-- Pushed by the host: { servers = { "name (source): state …", … },
-- failed = { names } }. Prompt commands are completed through the host.
M.state = { servers = {}, failed = {} }

-- vim.json encodes an empty table as a list; maps must stay objects.
local function object(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- The JSON the host reads from FIDO_MCP_CONFIG ("" when nothing is set).
function M.config_json(mcp)
  if type(mcp) ~= "table" then
    return ""
  end
  local servers = {}
  for name, s in pairs(mcp.servers or {}) do
    servers[name] = {
      command = s.command,
      args = s.args or {},
      env = object(s.env),
      cwd = s.cwd,
      url = s.url,
      headers = object(s.headers),
    }
  end
  return vim.json.encode({
    servers = object(servers),
    auto_approve = mcp.auto_approve or {},
    start_timeout_ms = mcp.start_timeout_ms,
    call_timeout_ms = mcp.call_timeout_ms,
  })
end

--- Called by the host when a server's state changes.
function M.set_state(servers, failed)
  M.state = { servers = servers or {}, failed = failed or {} }
  pcall(vim.cmd, "redrawstatus!")
end

--- A short statusline marker when a server failed ("" otherwise).
function M.marker()
  local n = #M.state.failed
  if n == 0 then
    return ""
  end
  return "MCP✗" .. (n > 1 and tostring(n) or "")
end

return M
