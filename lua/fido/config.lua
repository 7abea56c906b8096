-- Fido's options: typed defaults, merged and validated by setup().
local M = {}

M.defaults = {
  binary = nil, -- path of the fido binary; default: <plugin>/bin/fido, then fido on PATH
  root = nil, -- workspace root; default: the current directory when the session starts
  model = nil, -- FIDO_MODEL
  base_url = nil, -- FIDO_BASE_URL
  api_key = nil, -- OPENROUTER_API_KEY (the environment variable is preferred)
  reasoning = nil, -- minimal | low | medium | high
  layout = "right", -- right | left | bottom | tab
  width = 0.4, -- share of the columns (right/left) or lines (bottom), or a count of them
  input_height = 3,
  plan = { min_width = 60, width = 0.35, auto_show = true },
  log_file = nil, -- default: fido.log under stdpath("log") (0.8+) or stdpath("cache")
  -- MCP servers: name -> { command, args, env, cwd } or { url, headers }
  mcp = { servers = {}, auto_approve = {}, start_timeout_ms = 5000, call_timeout_ms = 60000 },
}

-- name -> { types, check (optional), description }
local schema = {
  binary = { { "string", "nil" } },
  root = { { "string", "nil" } },
  model = { { "string", "nil" } },
  base_url = { { "string", "nil" } },
  api_key = { { "string", "nil" } },
  reasoning = {
    { "string", "nil" },
    function(v)
      return v == nil or v == "minimal" or v == "low" or v == "medium" or v == "high"
    end,
    'one of "minimal", "low", "medium", "high"',
  },
  layout = {
    { "string" },
    function(v)
      return v == "right" or v == "left" or v == "bottom" or v == "tab"
    end,
    'one of "right", "left", "bottom", "tab"',
  },
  width = {
    { "number" },
    function(v)
      return v > 0
    end,
    "a positive number (a share like 0.4, or a column count)",
  },
  input_height = {
    { "number" },
    function(v)
      return v >= 1 and v == math.floor(v)
    end,
    "a whole number ≥ 1",
  },
  plan = { { "table" } },
  log_file = { { "string", "nil" } },
  mcp = { { "table" } },
}

local function whole_ms(v)
  return v >= 0 and v == math.floor(v)
end

local mcp_schema = {
  servers = { { "table" } },
  auto_approve = { { "table" } },
  start_timeout_ms = { { "number" }, whole_ms, "a whole number of milliseconds ≥ 0" },
  call_timeout_ms = {
    { "number" },
    function(v)
      return whole_ms(v) and v > 0
    end,
    "a whole number of milliseconds > 0",
  },
}

local plan_schema = {
  min_width = {
    { "number" },
    function(v)
      return v >= 0
    end,
    "a number ≥ 0",
  },
  width = {
    { "number" },
    function(v)
      return v > 0 and v <= 1
    end,
    "a share between 0 and 1",
  },
  auto_show = { { "boolean" } },
}

local function check(prefix, tbl, sch, errs)
  for key, value in pairs(tbl) do
    local s = sch[key]
    if not s then
      table.insert(errs, string.format("unknown option %s%s", prefix, key))
    else
      local ok = false
      for _, ty in ipairs(s[1]) do
        if type(value) == ty then
          ok = true
        end
      end
      if not ok then
        table.insert(
          errs,
          string.format("%s%s must be %s, got %s", prefix, key, table.concat(s[1], " or "), type(value))
        )
      elseif s[2] and not s[2](value) then
        table.insert(errs, string.format("%s%s must be %s, got %s", prefix, key, s[3], vim.inspect(value)))
      end
    end
  end
end

--- Validates opts (a partial table) and returns the merged config, or nil
--- and a message listing every problem.
function M.resolve(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    return nil, "setup() expects a table, got " .. type(opts)
  end
  local errs = {}
  check("", opts, schema, errs)
  if type(opts.plan) == "table" then
    check("plan.", opts.plan, plan_schema, errs)
  end
  if type(opts.mcp) == "table" then
    check("mcp.", opts.mcp, mcp_schema, errs)
    require("fido.mcp").check_servers(opts.mcp.servers, errs)
  end
  if #errs > 0 then
    table.sort(errs)
    return nil, "invalid options: " .. table.concat(errs, "; ")
  end
  return vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
end

M.values = vim.deepcopy(M.defaults)

--- Applies opts; on error keeps the previous config and returns the message.
function M.set(opts)
  local cfg, err = M.resolve(opts)
  if not cfg then
    return err
  end
  M.values = cfg
  return nil
end

return M
