-- The Go host: finding the binary, starting it as an RPC job on first use,
-- logging its stderr, and restarting it (with a notice) after it died.
local M = {}

local config = require("fido.config")
local lsp = require("fido.lsp")
local mcp = require("fido.mcp")
local status = require("fido.status")

local state = {
  chan = nil, -- RPC channel of the running host
  job = nil, -- job id when we started it (same as chan for rpc jobs)
  ready = false, -- the host completed its handshake
  died = nil, -- { code = n, log = path } after an unexpected exit
  stopping = false,
  log = nil, -- open log handle
  log_size = 0, -- bytes in the open log
}

--- The log is kept under this size: past it, it becomes <log>.1 (replacing
--- the one before) and a new log starts.
M.LOG_MAX_BYTES = 4 * 1024 * 1024

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "Fido" })
end

--- The plugin's root directory (holding lua/, plugin/, bin/).
function M.plugin_root()
  local src = debug.getinfo(1, "S").source:gsub("^@", "")
  return vim.fn.fnamemodify(src, ":p:h:h:h")
end

--- Resolves the binary: opts.binary, $FIDO_BINARY, <plugin root>/bin/fido,
--- fido on PATH. Returns the path, or nil, a one-line message saying what
--- to do and the places tried.
function M.binary()
  local cfg = config.values
  local tried = {}
  local candidates = {}
  if cfg.binary then
    table.insert(candidates, cfg.binary)
  end
  if vim.env.FIDO_BINARY and vim.env.FIDO_BINARY ~= "" then
    table.insert(candidates, vim.env.FIDO_BINARY)
  end
  table.insert(candidates, M.plugin_root() .. "/bin/fido")
  for _, c in ipairs(candidates) do
    local p = vim.fn.expand(c)
    if vim.fn.executable(p) == 1 then
      return p
    end
    table.insert(tried, p)
  end
  local onpath = vim.fn.exepath("fido")
  if onpath ~= "" then
    return onpath
  end
  table.insert(tried, "fido on $PATH")
  -- One line that says what to do; under lazy.nvim that is its build step.
  if package.loaded["lazy"] then
    return nil, "bin/fido not found: run :Lazy build fido", tried
  end
  return nil, string.format("bin/fido not found: run `make` in %s (needs Go)", M.plugin_root()), tried
end

-- What is wrong with a binary the user named (setup's `binary`, else
-- $FIDO_BINARY) that is not the one found (bin: nil when none was), in one
-- line: which runs instead, or that none does; nil when it is fine.
local function named_binary_warning(bin)
  local name, what = config.values.binary, "binary"
  if not name and vim.env.FIDO_BINARY and vim.env.FIDO_BINARY ~= "" then
    name, what = vim.env.FIDO_BINARY, "$FIDO_BINARY"
  end
  if not name then
    return nil
  end
  local p = vim.fn.expand(name)
  if p == bin then
    return nil
  end
  local why = (vim.fn.filereadable(p) == 1 and vim.fn.isdirectory(p) == 0) and "is not executable" or "does not exist"
  if bin then
    return string.format("%s %s %s; running %s instead", what, p, why, bin)
  end
  return string.format("%s %s %s, and no other fido binary was found", what, p, why)
end

--- The log file the host's stderr goes to.
function M.log_path()
  if config.values.log_file then
    return vim.fn.expand(config.values.log_file)
  end
  for _, what in ipairs({ "log", "state", "cache" }) do
    local ok, dir = pcall(vim.fn.stdpath, what)
    if ok and type(dir) == "string" and dir ~= "" then
      return dir .. "/fido.log"
    end
  end
  -- One name for the session: the log is reopened at each rotation, and
  -- the notice after a crash names it.
  state.temp_log = state.temp_log or (vim.fn.tempname() .. "-fido.log")
  return state.temp_log
end

local function open_log()
  local path = M.log_path()
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  if vim.fn.getfsize(path) >= M.LOG_MAX_BYTES then
    os.rename(path, path .. ".1")
  end
  state.log = io.open(path, "a")
  state.log_size = state.log and state.log:seek("end") or 0
end

local function log_lines(lines)
  for _, l in ipairs(lines) do
    if l ~= "" then
      if state.log and state.log_size >= M.LOG_MAX_BYTES then
        state.log:close()
        state.log = nil
      end
      if not state.log then
        open_log()
        if not state.log then
          return
        end
      end
      state.log:write(l, "\n")
      state.log_size = state.log_size + #l + 1
    end
  end
  if state.log then
    state.log:flush()
  end
end

--- A job's on_stderr handler that logs whole lines: Neovim hands output
--- over in chunks whose first item ends the line the last chunk began and
--- whose last item begins the next one. done() logs what is left.
function M.line_logger(log)
  local partial = ""
  local function on_data(data)
    data[1] = partial .. data[1]
    partial = table.remove(data)
    log(data)
  end
  local function done()
    if partial ~= "" then
      log({ partial })
      partial = ""
    end
  end
  return on_data, done
end

local function env()
  local cfg = config.values
  local e = {}
  local map = {
    FIDO_MODEL = cfg.model,
    FIDO_BASE_URL = cfg.base_url,
    OPENROUTER_API_KEY = cfg.api_key,
    FIDO_REASONING = cfg.reasoning,
    FIDO_EDITS = cfg.edits,
    FIDO_IDLE_TIMEOUT = cfg.idle_timeout_ms and (tostring(cfg.idle_timeout_ms) .. "ms") or nil,
    FIDO_RESUME = cfg.resume,
    FIDO_SANDBOX = cfg.sandbox,
    FIDO_MODELS = cfg.models and table.concat(cfg.models, ",") or nil,
  }
  -- Only non-empty lists: an empty Lua table encodes as a JSON object.
  local perms, rules = cfg.permissions or {}, {}
  for _, k in ipairs({ "allow", "deny" }) do
    if perms[k] and #perms[k] > 0 then
      rules[k] = perms[k]
    end
  end
  if next(rules) then
    map.FIDO_PERMISSIONS = vim.json.encode(rules)
  end
  map.FIDO_MCP_CONFIG = mcp.config_json(cfg.mcp)
  for k, v in pairs(map) do
    if v ~= nil and v ~= "" then
      e[k] = v
    end
  end
  -- Key commands: the host runs them (argv as JSON), so the key itself never
  -- passes through Lua or an environment variable.
  for k, v in pairs({ FIDO_API_KEY_CMD = cfg.api_key_cmd, FIDO_TAVILY_API_KEY_CMD = cfg.tavily_api_key_cmd }) do
    if v ~= nil then
      e[k] = vim.fn.json_encode(v)
    end
  end
  return e
end

--- Starts the host. Returns the channel, or nil and a message.
function M.start()
  local bin, err = M.binary()
  local warning = named_binary_warning(bin)
  if not bin then
    return nil, warning and string.format("%s (%s)", warning, err) or err
  end
  -- Said once per session and setting (the host may restart).
  if warning and state.warned ~= warning then
    state.warned = warning
    vim.schedule(function()
      notify("Fido: " .. warning, vim.log.levels.WARN)
    end)
  end
  local root = config.values.root and vim.fn.expand(config.values.root) or vim.fn.getcwd()
  log_lines({ string.format("--- %s starting %s serve --root %s", os.date("%Y-%m-%d %H:%M:%S"), bin, root) })
  state.ready, state.stopping = false, false
  local job
  local on_stderr, stderr_done = M.line_logger(log_lines)
  local opts = {
    rpc = true,
    on_stderr = function(_, data)
      on_stderr(data)
    end,
    on_exit = function(_, code)
      stderr_done()
      if state.job ~= job then
        return
      end
      log_lines({ string.format("--- host exited with code %d", code) })
      local expected = state.stopping
      state.chan, state.job, state.ready = nil, nil, false
      if not expected then
        state.died = { code = code, log = M.log_path() }
      end
      -- A turn that was running is over (the spinner stops).
      status.host_exited()
    end,
  }
  -- 0.7 rejects an empty env table (E475): only pass one with entries.
  local e = env()
  if next(e) then
    opts.env = e
  end
  local ok, res = pcall(vim.fn.jobstart, { bin, "serve", "--root", root }, opts)
  if not ok or type(res) ~= "number" or res <= 0 then
    return nil, string.format("could not start %s: %s", bin, tostring(res))
  end
  job = res
  state.job, state.chan = job, job
  return job
end

--- The channel of the running host, starting (or restarting) it first.
function M.ensure()
  if state.chan then
    return state.chan
  end
  if state.died then
    local d = state.died
    state.died = nil
    notify(
      string.format("Fido's host exited unexpectedly (code %d); restarting it. Log: %s", d.code, d.log),
      vim.log.levels.WARN
    )
  end
  local chan, err = M.start()
  if not chan then
    -- Scheduled: an error message inside a command run by a plugin manager's
    -- pcall (lazy.nvim's cmd handler) would turn into a stack trace.
    -- Said once per command (:Fido {text} starts the host twice).
    local t = vim.loop.now()
    if state.failed ~= err or t - (state.failed_at or 0) > 2000 then
      state.failed, state.failed_at = err, t
      vim.schedule(function()
        notify("Fido: " .. err, vim.log.levels.ERROR)
      end)
    end
  end
  return chan
end

--- The running host's channel, or nil (never starts it).
function M.chan()
  return state.chan
end

--- Whether the host completed its handshake.
function M.ready()
  return state.ready
end

--- Whether the last host exited unexpectedly (cleared by the restart).
function M.died()
  return state.died
end

--- Sends a notification to the host, starting it when needed.
function M.notify(method, ...)
  local chan = M.ensure()
  if not chan then
    return false
  end
  local ok, err = pcall(vim.rpcnotify, chan, method, ...)
  if not ok then
    notify("could not reach Fido's host: " .. tostring(err), vim.log.levels.ERROR)
  end
  return ok
end

local function dims()
  return { columns = vim.o.columns, lines = vim.o.lines, cmdheight = vim.o.cmdheight }
end

--- Called by the host once it serves (its handshake). Also how a host that
--- Neovim did not start (tests, benchmarks) attaches. Returns what the host
--- needs to know about the editor.
function M.connected(chan)
  if state.chan ~= chan then
    state.chan, state.job = chan, nil
  end
  state.ready, state.died = true, nil
  -- Follow language servers from now on (which buffers still await their
  -- first diagnostics); a no-op before Neovim 0.8.
  pcall(lsp.track)
  local group = vim.api.nvim_create_augroup("FidoHost", { clear = true })
  vim.api.nvim_create_autocmd("VimResized", {
    group = group,
    callback = function()
      if state.chan then
        pcall(vim.rpcnotify, state.chan, "fido_resize", dims())
      end
    end,
  })
  local plan = config.values.plan or {}
  return {
    dims = dims(),
    plan = { min_width = plan.min_width, width = plan.width, auto_show = plan.auto_show },
  }
end

--- Stops the host (no restart notice follows).
function M.stop()
  state.stopping = true
  if state.job then
    pcall(vim.fn.jobstop, state.job)
  end
  state.chan, state.job, state.ready = nil, nil, false
end

--- The job's process id, or nil.
function M.pid()
  if not state.job then
    return nil
  end
  local ok, pid = pcall(vim.fn.jobpid, state.job)
  if ok then
    return pid
  end
  return nil
end

return M
