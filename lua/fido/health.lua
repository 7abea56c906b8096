-- :checkhealth fido
local M = {}

-- 0.10 has vim.health.ok/warn/error; 0.7–0.9 vim.health.report_* (0.8+) or
-- the health#report_* functions.
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

function M.check()
  local r = reporter()
  local host = require("fido.host")
  local config = require("fido.config")

  r.start("Fido binary")
  local bin, err = host.binary()
  if bin then
    local v, verr = version_of(bin)
    if v then
      r.ok(string.format("found %s (%s)", bin, v))
    else
      r.error(string.format("%s does not run: %s", bin, verr or "?"), { "Run `make` in " .. host.plugin_root() })
    end
  else
    r.error(err, { "Run `make` in " .. host.plugin_root() })
  end
  r.info("log file: " .. host.log_path())

  r.start("Neovim")
  r.ok("version " .. tostring(vim.version().major) .. "." .. vim.version().minor .. "." .. vim.version().patch)
  if vim.fn.exists("+winbar") == 1 then
    r.ok("winbar: yes (the subagent bar uses the transcript window's winbar)")
  else
    r.info("winbar: no (Neovim < 0.8; the subagent bar is a one-line float)")
  end

  r.start("Provider")
  local key = config.values.api_key or vim.env.OPENROUTER_API_KEY
  if key and key ~= "" then
    r.ok("OPENROUTER_API_KEY is set")
  else
    r.warn("OPENROUTER_API_KEY is not set", { "export OPENROUTER_API_KEY=... before starting Neovim" })
  end
  r.info("model: " .. (config.values.model or vim.env.FIDO_MODEL or "(the binary's default)"))
  r.info("base URL: " .. (config.values.base_url or vim.env.FIDO_BASE_URL or "https://openrouter.ai/api/v1"))
  if vim.env.TAVILY_API_KEY and vim.env.TAVILY_API_KEY ~= "" then
    r.ok("TAVILY_API_KEY is set (websearch, browse_url)")
  else
    r.info("TAVILY_API_KEY is not set: websearch and browse_url will say so when called")
  end

  r.start("Prompts")
  local default_select = vim.fn.has("nvim-0.7") == 1 and debug.getinfo(vim.ui.select, "S").source:match("vim/ui%.lua$")
  if default_select then
    r.info("vim.ui.select: Neovim's default (inputlist); a picker plugin (telescope, fzf-lua, dressing, snacks) makes approvals nicer")
  else
    r.ok("vim.ui.select is overridden (" .. debug.getinfo(vim.ui.select, "S").short_src .. ")")
  end

  r.start("MCP servers")
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
  local mcp = require("fido.mcp")
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

  r.start("Tools")
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

return M
