-- :checkhealth fido: one function per section (see M.sections).
local M = {}

local config = require("fido.config")
local host = require("fido.host")
local lsp = require("fido.lsp")
local lualine = require("fido.lualine")
local mcp = require("fido.mcp")
local mentions = require("fido.mentions")
local questions = require("fido.questions")
local slash = require("fido.slash")

--- The line that keeps lualine off Fido's windows (see fido.lualine).
M.LUALINE_LINE = lualine.LINE

--- The lualine entries missing for Fido's windows (see fido.lualine).
M.lualine_missing = lualine.missing

---@class fido.HealthReporter
---@field start fun(name: string)
---@field ok fun(msg: string)
---@field warn fun(msg: string, advice?: string[])
---@field error fun(msg: string, advice?: string[])
---@field info fun(msg: string)

-- 0.10 has vim.health.ok/warn/error; 0.7–0.9 vim.health.report_* (0.8+) or
-- the health#report_* functions.
---@return fido.HealthReporter
local function reporter()
  local h = vim.health or {}
  local function pick(new, old, vimfn)
    if type(h[new]) == "function" then
      return h[new]
    end
    if type(h[old]) == "function" then
      return h[old]
    end
    return function(msg, advice)
      if advice then
        vim.fn[vimfn](msg, advice)
      else
        vim.fn[vimfn](msg)
      end
    end
  end
  return {
    start = pick("start", "report_start", "health#report_start"),
    ok = pick("ok", "report_ok", "health#report_ok"),
    warn = pick("warn", "report_warn", "health#report_warn"),
    error = pick("error", "report_error", "health#report_error"),
    info = pick("info", "report_info", "health#report_info"),
  }
end

local function version_of(bin)
  local out = vim.fn.system({ bin, "version" })
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return vim.trim(out)
end

-- The binary the plugin runs, its version, and the log.
local function binary_section(r)
  local bin, err, tried = host.binary()
  if bin then
    local v, verr = version_of(bin)
    if v then
      r.ok(string.format("found %s (%s)", bin, v))
    else
      r.error(string.format("%s does not run: %s", bin, verr or "?"), { "Run `make` in " .. host.plugin_root() })
    end
  else
    r.error(err, { "tried: " .. table.concat(tried or {}, ", "), "or set setup({ binary = ... })" })
  end
  r.info("log file: " .. host.log_path())
end

-- This Neovim and what Fido uses of it.
local function neovim_section(r)
  r.ok("version " .. tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch)
  if vim.fn.exists("+winbar") == 1 then
    r.ok("winbar: yes (the subagent bar uses the transcript window's winbar)")
  else
    r.info("winbar: no (Neovim < 0.8; the subagent bar is a one-line float)")
  end
end

-- What the host reports this machine enforces for commands (Lua probes
-- nothing itself).
local function sandbox_section(r)
  local bin = host.binary()
  if not bin then
    r.warn("no fido binary: the sandbox cannot be checked")
    return
  end
  local out = vim.fn.systemlist({ bin, "doctor", "--sandbox" })
  if vim.v.shell_error ~= 0 then
    r.error("fido doctor --sandbox failed: " .. table.concat(out, " "))
  end
  for _, line in ipairs(out) do
    local level, text = line:match("^(%a+): (.*)$")
    local report = level and r[level == "warn" and "warn" or (level == "ok" and "ok" or "info")] or r.info
    report(text or line)
  end
end

-- The lsp_* tools and the diagnostics after edits.
local function lsp_section(r)
  local why = lsp.unsupported()
  if why then
    r.warn(why, { "Use Neovim 0.8 or later for the lsp_* tools and the diagnostics edits report" })
    return
  end
  local lsp_opts = config.values.lsp or {}
  if lsp_opts.diagnostics == false then
    r.info("diagnostics after edits: off (setup({ lsp = { diagnostics = false } }))")
  else
    r.ok(string.format("diagnostics after edits: on (wait up to %d ms)", lsp_opts.wait_ms or 2000))
  end
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local names = {}
  for _, c in ipairs(get()) do
    table.insert(names, c.name)
  end
  if #names > 0 then
    r.ok("running language servers: " .. table.concat(names, ", "))
  else
    r.info("no language server is running now; Fido uses the ones your configuration attaches to a file's buffer")
  end
end

-- The model provider's key, model and endpoint; the web tools' key.
local function provider_section(r)
  local key = config.values.api_key or vim.env.OPENROUTER_API_KEY
  if key and key ~= "" then
    r.ok("OPENROUTER_API_KEY is set")
  elseif config.values.api_key_cmd then
    r.ok("api_key_cmd is set: the host runs " .. config.values.api_key_cmd[1] .. " for the key when it starts")
  else
    r.warn("OPENROUTER_API_KEY is not set", {
      "export OPENROUTER_API_KEY=... before starting Neovim",
      'or setup({ api_key_cmd = { "pass", "show", "openrouter" } })',
    })
  end
  r.info("model: " .. (config.values.model or vim.env.FIDO_MODEL or "(the binary's default)"))
  r.info("base URL: " .. (config.values.base_url or vim.env.FIDO_BASE_URL or "https://openrouter.ai/api/v1"))
  if vim.env.TAVILY_API_KEY and vim.env.TAVILY_API_KEY ~= "" then
    r.ok("TAVILY_API_KEY is set (websearch, browse_url)")
  elseif config.values.tavily_api_key_cmd then
    r.ok("tavily_api_key_cmd is set (websearch, browse_url)")
  else
    r.info("TAVILY_API_KEY is not set: websearch and browse_url will say so when called")
  end
end

-- Whether a statusline plugin replaces Fido's statusline and winbar.
local function statusline_section(r)
  local missing = lualine.missing()
  if missing then
    r.warn(
      "lualine replaces the statusline of Fido's windows (model, state, tokens, cost) and the subagent winbar ("
        .. table.concat(missing, ", ")
        .. " not disabled)",
      { "add Fido's filetypes to lualine's disabled_filetypes: " .. lualine.LINE }
    )
  elseif package.loaded["lualine"] then
    r.ok("lualine leaves Fido's windows alone (disabled_filetypes has fido and fido_input)")
  else
    r.ok("no lualine loaded: Fido's windows keep their own statusline")
  end
end

-- Which vim.ui.select asks Fido's questions, whether it can show what is
-- asked, and how a waiting question is answered.
local function questions_section(r)
  local sel = questions.select_ui()
  local q = config.values.questions or {}
  local mode = q.ui or "auto"
  r.info("vim.ui.select: " .. sel.name .. (sel.builtin and "" or (" (" .. sel.source .. ")")))
  if mode == "fido" then
    r.ok('questions.ui = "fido": every question asks in Fido\'s own window (what is asked in full, scrollable)')
  elseif sel.builtin and mode == "auto" then
    r.ok(
      "inputlist() shows no preview and blocks the editor while it asks: every question asks in Fido's own window "
        .. "(what is asked in full, scrollable)"
    )
  elseif sel.builtin then
    r.warn(
      'questions.ui = "select": questions use inputlist(); what is asked shows above it only when it fits the '
        .. "screen (else Fido's window asks), it cannot scroll, and digits answer at once"
    )
  elseif mode == "auto" then
    r.ok(
      sel.name
        .. " shows no preview of what Fido asks (it has no room for the whole command and cannot scroll it): "
        .. "approvals, reviews, MCP trust and ask_user ask in Fido's own window; lists you pick from "
        .. "(/rewind's messages, /sessions, /model) use "
        .. sel.name
    )
  else
    r.info(
      'questions.ui = "select": every question uses '
        .. sel.name
        .. "; what is asked shows in a float beside its windows, and Fido's window asks instead when "
        .. sel.name
        .. " leaves too little room. Keys typed after a question took the focus reach "
        .. sel.name
    )
  end
  local key = questions.key()
  if key then
    r.ok(
      "a question never takes the focus while you write; "
        .. key
        .. " (normal mode, Fido's input and transcript) or :FidoApprove opens the waiting one"
    )
  else
    r.info("questions.key = false: :FidoApprove opens a waiting question")
  end
end

-- The instruction files in the system message and the user's commands.
local function instructions_section(r)
  local root = mentions.root()
  local cfg_home = (vim.env.XDG_CONFIG_HOME and vim.env.XDG_CONFIG_HOME ~= "") and vim.env.XDG_CONFIG_HOME
    or (vim.env.HOME .. "/.config")
  local user_agents = cfg_home .. "/fido/AGENTS.md"
  local in_effect = {}
  if vim.fn.filereadable(user_agents) == 1 then
    table.insert(in_effect, user_agents)
  end
  for _, name in ipairs({ "AGENTS.md", "CLAUDE.md" }) do
    if vim.fn.filereadable(root .. name) == 1 then
      table.insert(in_effect, name)
      break
    end
  end
  if #in_effect == 0 then
    r.info("no instruction files (AGENTS.md or CLAUDE.md at the workspace root, " .. user_agents .. ")")
  else
    r.ok("instruction files in the system message: " .. table.concat(in_effect, ", "))
  end
  local builtin = {}
  for _, c in ipairs(slash.names) do
    builtin[c:match("^/(%S+)")] = true
  end
  local found, clashes = 0, {}
  for _, dir in ipairs({ root .. ".fido/commands", cfg_home .. "/fido/commands", root .. ".claude/commands" }) do
    for _, f in ipairs(vim.fn.globpath(dir, "**/*.md", false, true)) do
      found = found + 1
      local name = f:sub(#dir + 2):gsub("%.md$", ""):gsub("/", ":")
      if builtin[name] then
        table.insert(clashes, "/" .. name .. " (" .. f .. ")")
      end
    end
  end
  if found > 0 then
    r.ok(found .. " command file(s) in .fido/commands, " .. cfg_home .. "/fido/commands or .claude/commands")
  end
  for _, c in ipairs(clashes) do
    r.warn("your command " .. c .. " has the name of a built-in command; the built-in wins")
  end
end

-- The MCP configuration files and each server's state (pushed by the host).
local function mcp_section(r)
  local config_home = vim.env.XDG_CONFIG_HOME
  if not config_home or config_home == "" then
    config_home = vim.fn.expand("~/.config")
  end
  local root = config.values.root or vim.fn.getcwd()
  for _, f in ipairs({ config_home .. "/fido/mcp.json", root .. "/.mcp.json" }) do
    if vim.fn.filereadable(f) == 1 then
      r.info("config file: " .. f)
    else
      r.info("config file: " .. f .. " (absent)")
    end
  end
  local lines = mcp.state.servers or {}
  if #lines == 0 then
    r.info("no server states yet (they show once Fido runs; /mcp lists them)")
  end
  local failed = {}
  for _, n in ipairs(mcp.state.failed or {}) do
    failed[n] = true
  end
  for _, line in ipairs(lines) do
    local name = line:match("^(%S+)")
    if failed[name] then
      r.error(line)
    elseif line:find(": ready") then
      r.ok(line)
    else
      r.warn(line)
    end
  end
end

-- The programs Fido's features use.
local function tools_section(r)
  -- Fido's own search is built in; rg is only for commands run with bash_exec.
  if vim.fn.executable("rg") == 1 then
    r.ok("rg found: " .. vim.fn.exepath("rg"))
  else
    r.info("rg not found (Fido's ripgrep tool is built in; rg only matters for commands you approve in bash_exec)")
  end
  if vim.fn.executable("git") == 1 then
    r.ok("git found (the <C-o> mention picker uses git's ignore rules)")
  else
    r.info("git not found: the <C-o> mention picker lists files without ignore rules")
  end
end

--- The report's sections in order, each { title, fn(reporter) }.
---@type { [1]: string, [2]: fun(r: fido.HealthReporter) }[]
M.sections = {
  { "Fido binary", binary_section },
  { "Command sandbox (bash_exec)", sandbox_section },
  { "Neovim", neovim_section },
  { "Language servers (lsp_* tools, diagnostics after edits)", lsp_section },
  { "Provider", provider_section },
  { "Statusline plugins", statusline_section },
  { "Questions (approvals, reviews, MCP trust, ask_user)", questions_section },
  { "Instructions and your commands", instructions_section },
  { "MCP servers", mcp_section },
  { "Tools", tools_section },
}

function M.check()
  local r = reporter()
  for _, s in ipairs(M.sections) do
    r.start(s[1])
    s[2](r)
  end
end

return M
