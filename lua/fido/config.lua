-- Fido's options: typed defaults, merged and validated by setup().
local M = {}

---@alias fido.Layout "right"|"left"|"bottom"|"tab"
---@alias fido.Reasoning "minimal"|"low"|"medium"|"high"

--- The plan float.
---@class fido.PlanConfig
---@field min_width? number below this many columns the plan is a full-width overlay (default 60)
---@field width? number share of the columns the float takes, 0 to 1 (default 0.35)
---@field auto_show? boolean show the float when the plan changes (default true)

--- :FidoReview's buffer-local keymaps; false disables one.
---@class fido.ReviewKeymaps
---@field hunk? string|false revert the hunk under the cursor (default "gr")
---@field file? string|false revert the whole file (default "gR")
---@field close? string|false close the review (default "q")

---@class fido.ReviewConfig
---@field keymaps? fido.ReviewKeymaps

--- Approvals and questions.
---@class fido.QuestionsConfig
---@field ui? "auto"|"fido"|"select" "auto" asks in Fido's own window whatever has something to show (a command, a diff) and everything when vim.ui.select is Neovim's default; "fido" always; "select" through vim.ui.select
---@field key? string|false the key (normal mode, Fido's input and transcript) that opens the waiting question (default "ga"; false: none)

--- Neovim's LSP client (0.8+): the diagnostics an edit introduced, and the lsp_* tools.
---@class fido.LspConfig
---@field diagnostics? boolean report the errors and warnings an edit introduced (default true)
---@field wait_ms? integer how long to wait for a server's diagnostics after an edit (default 2000)
---@field request_timeout_ms? integer how long an lsp_* tool waits for the servers (default 5000)

--- One MCP server: a command (stdio) or a url (HTTP).
---@class fido.McpServer
---@field command? string
---@field args? string[]
---@field env? table<string, string>
---@field cwd? string
---@field url? string
---@field headers? table<string, string>

---@class fido.McpConfig
---@field servers? table<string, fido.McpServer> by name
---@field auto_approve? string[] tools called without a question: "server/tool" or "server/*"
---@field start_timeout_ms? integer how long the tool list waits for servers still starting (default 5000)
---@field call_timeout_ms? integer how long one MCP tool call may take (default 60000)

--- Command rules for bash_exec: the words a command starts with ("exact …" for a whole command).
---@class fido.PermissionsConfig
---@field allow? string[] run without a question
---@field deny? string[] refused

--- Fido's options (every one optional in setup()).
---@class fido.Config
---@field binary? string path of the fido binary; default: <plugin>/bin/fido, then fido on PATH
---@field root? string workspace root; default: the current directory when the session starts
---@field model? string the model id (FIDO_MODEL)
---@field base_url? string an OpenAI-compatible endpoint (FIDO_BASE_URL; default OpenRouter's)
---@field api_key? string OPENROUTER_API_KEY (the environment variable is preferred)
---@field api_key_cmd? string[] command printing the key, e.g. { "pass", "show", "openrouter" }
---@field tavily_api_key_cmd? string[] the same for TAVILY_API_KEY
---@field reasoning? fido.Reasoning the reasoning effort (default: the model's)
---@field edits? "auto"|"review" auto: Fido's file changes apply at once; review: each is shown and asked first
---@field layout? fido.Layout where the sidebar opens (default "right")
---@field width? number share of the columns (right/left) or lines (bottom), or a count of them (default 0.4)
---@field input_height? integer lines of the input window (default 3)
---@field plan? fido.PlanConfig
---@field review? fido.ReviewConfig
---@field questions? fido.QuestionsConfig
---@field lsp? fido.LspConfig
---@field log_file? string default: fido.log under stdpath("log") (0.8+) or stdpath("cache")
---@field mcp? fido.McpConfig
---@field idle_timeout_ms? integer a model stream with no data for this long fails (FIDO_IDLE_TIMEOUT; default 120000)
---@field models? string[] model ids listed first by /model, e.g. { "anthropic/claude-sonnet-4.5" }
---@field permissions? fido.PermissionsConfig
---@field sandbox? "off"|"ask"|"auto" the OS sandbox for commands: "ask" runs them sandboxed and asks as before, "auto" runs what the sandbox makes harmless unasked, "off" none (FIDO_SANDBOX)
---@field resume? "last"|"new" "last" continues the workspace's newest saved conversation, "new" starts afresh (FIDO_RESUME)

---@type fido.Config
M.defaults = {
  binary = nil, -- path of the fido binary; default: <plugin>/bin/fido, then fido on PATH
  root = nil, -- workspace root; default: the current directory when the session starts
  model = nil, -- FIDO_MODEL
  base_url = nil, -- FIDO_BASE_URL
  api_key = nil, -- OPENROUTER_API_KEY (the environment variable is preferred)
  api_key_cmd = nil, -- command printing the key, e.g. { "pass", "show", "openrouter" }
  tavily_api_key_cmd = nil, -- the same for TAVILY_API_KEY
  reasoning = nil, -- minimal | low | medium | high
  edits = "auto", -- auto: Fido's file changes apply at once; review: each is shown and asked first
  layout = "right", -- right | left | bottom | tab
  width = 0.4, -- share of the columns (right/left) or lines (bottom), or a count of them
  input_height = 3,
  plan = { min_width = 60, width = 0.35, auto_show = true },
  -- :FidoReview's buffer-local keymaps (false disables one)
  review = { keymaps = { hunk = "gr", file = "gR", close = "q" } },
  -- Approvals and questions: ui "auto" asks in Fido's own window whatever has something to show (a command,
  -- a diff) and everything when vim.ui.select is Neovim's default; "fido" always, "select" through
  -- vim.ui.select. key (normal mode, Fido's input and transcript; false: none) opens the waiting one.
  questions = { ui = "auto", key = "ga" },
  -- Neovim's LSP client (0.8+): diagnostics an edit introduced, and the lsp_* tools.
  lsp = { diagnostics = true, wait_ms = 2000, request_timeout_ms = 5000 },
  log_file = nil, -- default: fido.log under stdpath("log") (0.8+) or stdpath("cache")
  -- MCP servers: name -> { command, args, env, cwd } or { url, headers }
  mcp = { servers = {}, auto_approve = {}, start_timeout_ms = 5000, call_timeout_ms = 60000 },
  idle_timeout_ms = nil, -- FIDO_IDLE_TIMEOUT; a model stream with no data for this long fails (default 120000)
  models = nil, -- model ids listed first by /model, e.g. { "anthropic/claude-sonnet-4.5" }
  -- command rules for bash_exec: words a command starts with ("exact …" for a whole command)
  permissions = { allow = {}, deny = {} },
  -- FIDO_SANDBOX: "ask" (default: commands run in the OS sandbox, asked as before), "auto"
  -- (commands the sandbox makes harmless run unasked) or "off" (no sandbox); nil keeps FIDO_SANDBOX
  sandbox = nil,
  resume = "last", -- FIDO_RESUME: "last" continues the workspace's newest saved conversation, "new" starts afresh
}

local function is_argv(v)
  if v == nil then
    return true
  end
  if #v == 0 then
    return false
  end
  for k, item in pairs(v) do
    if type(k) ~= "number" or type(item) ~= "string" or item == "" then
      return false
    end
  end
  return true
end
local argv_desc = 'a list of non-empty strings, e.g. { "pass", "show", "openrouter" }'

-- name -> { types, check (optional), description }
local schema = {
  binary = { { "string", "nil" } },
  root = { { "string", "nil" } },
  model = { { "string", "nil" } },
  base_url = { { "string", "nil" } },
  api_key = { { "string", "nil" } },
  api_key_cmd = { { "table", "nil" }, is_argv, argv_desc },
  tavily_api_key_cmd = { { "table", "nil" }, is_argv, argv_desc },
  reasoning = {
    { "string", "nil" },
    function(v)
      return v == nil or v == "minimal" or v == "low" or v == "medium" or v == "high"
    end,
    'one of "minimal", "low", "medium", "high"',
  },
  edits = {
    { "string" },
    function(v)
      return v == "auto" or v == "review"
    end,
    'one of "auto", "review"',
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
  review = { { "table" } },
  questions = { { "table" } },
  lsp = { { "table" } },
  log_file = { { "string", "nil" } },
  mcp = { { "table" } },
  models = {
    { "table", "nil" },
    function(v)
      for _, m in ipairs(v or {}) do
        if type(m) ~= "string" then
          return false
        end
      end
      return true
    end,
    "a list of model ids",
  },
  permissions = {
    { "table" },
    function(v)
      for k, list in pairs(v) do
        if (k ~= "allow" and k ~= "deny") or type(list) ~= "table" then
          return false
        end
        for _, r in ipairs(list) do
          if type(r) ~= "string" or not r:match("%S") then
            return false
          end
        end
      end
      return true
    end,
    '{ allow = { "go test", … }, deny = { "git push", … } }',
  },
  sandbox = {
    { "string", "nil" },
    function(v)
      return v == nil or v == "off" or v == "ask" or v == "auto"
    end,
    'one of "off", "ask", "auto"',
  },
  resume = {
    { "string" },
    function(v)
      return v == "last" or v == "new"
    end,
    '"last" or "new"',
  },
  idle_timeout_ms = {
    { "number", "nil" },
    function(v)
      return v == nil or (v >= 1 and v == math.floor(v))
    end,
    "a whole number of milliseconds ≥ 1",
  },
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

local function milliseconds(v)
  return v >= 0 and v <= 600000 and v == math.floor(v)
end

local lsp_schema = {
  diagnostics = { { "boolean" } },
  wait_ms = { { "number" }, milliseconds, "a whole number of milliseconds from 0 to 600000" },
  request_timeout_ms = { { "number" }, milliseconds, "a whole number of milliseconds from 0 to 600000" },
}

local questions_schema = {
  ui = {
    { "string" },
    function(v)
      return v == "auto" or v == "fido" or v == "select"
    end,
    'one of "auto", "fido", "select"',
  },
  key = {
    { "string", "boolean" },
    function(v)
      return v == false or (type(v) == "string" and v ~= "")
    end,
    'a key (e.g. "ga") or false',
  },
}

-- Adds a message to errs for each malformed mcp.servers entry.
local function check_servers(servers, errs)
  if type(servers) ~= "table" then
    return
  end
  for name, s in pairs(servers) do
    local where = "mcp.servers." .. tostring(name)
    if type(name) ~= "string" then
      table.insert(errs, "mcp.servers keys must be server names")
    elseif type(s) ~= "table" then
      table.insert(errs, where .. " must be a table")
    elseif (s.command == nil) == (s.url == nil) then
      table.insert(errs, where .. " needs a command or a url (one of them)")
    else
      for _, k in ipairs({ "command", "url", "cwd" }) do
        if s[k] ~= nil and type(s[k]) ~= "string" then
          table.insert(errs, where .. "." .. k .. " must be a string")
        end
      end
      for _, k in ipairs({ "args", "env", "headers" }) do
        if s[k] ~= nil and type(s[k]) ~= "table" then
          table.insert(errs, where .. "." .. k .. " must be a table")
        end
      end
    end
  end
end

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
---@param opts? fido.Config
---@return fido.Config?, string?
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
    check_servers(opts.mcp.servers, errs)
  end
  if type(opts.review) == "table" then
    check("review.", opts.review, { keymaps = { { "table" } } }, errs)
    if type(opts.review.keymaps) == "table" then
      local key = { { "string", "boolean" } }
      check("review.keymaps.", opts.review.keymaps, { hunk = key, file = key, close = key }, errs)
    end
  end
  if type(opts.lsp) == "table" then
    check("lsp.", opts.lsp, lsp_schema, errs)
  end
  if type(opts.questions) == "table" then
    check("questions.", opts.questions, questions_schema, errs)
  end
  if #errs > 0 then
    table.sort(errs)
    return nil, "invalid options: " .. table.concat(errs, "; ")
  end
  return vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
end

--- The configuration in effect.
---@type fido.Config
M.values = vim.deepcopy(M.defaults)

--- Applies opts; on error keeps the previous config and returns the message.
---@param opts? fido.Config
---@return string? err
function M.set(opts)
  local cfg, err = M.resolve(opts)
  if not cfg then
    return err
  end
  M.values = cfg
  return nil
end

return M
