-- User commands and their completion.
local M = {}

-- Slash commands (the host's agent.Commands; a test keeps them in step).
M.slash = { "/plan", "/plan clear", "/suspend", "/recall", "/undo", "/undo revert", "/reasoning", "/help", "/quit" }
-- MCP commands, then the servers' prompts as the host reports them.
vim.list_extend(M.slash, { "/mcp", "/mcp reload", "/mcp trust reset" })

--- Every slash command, the MCP prompt commands included.
function M.all_slash()
  local out = vim.list_extend({}, M.slash)
  return vim.list_extend(out, require("fido.mcp").state.commands or {})
end
local sub = {
  ["/plan"] = { "clear" },
  ["/undo"] = { "revert" },
  ["/reasoning"] = { "minimal", "low", "medium", "high", "default" },
  ["/mcp"] = { "reload", "trust reset" },
}

local function starts(s, prefix)
  return s:sub(1, #prefix) == prefix
end

--- Completion of :Fido: slash commands and their arguments.
function M.complete_fido(arglead, cmdline)
  if starts(arglead, "@") then
    return require("fido.mentions").complete(arglead)
  end
  local args = cmdline:gsub("^%s*%S+%s*", "", 1)
  if not starts(args, "/") then
    return {}
  end
  local cmd, rest = args:match("^(%S+)%s+(.*)$")
  if cmd then
    local out = {}
    for _, a in ipairs(sub[cmd] or {}) do
      if starts(a, rest) then
        table.insert(out, a)
      end
    end
    return out
  end
  local out = {}
  for _, c in ipairs(M.all_slash()) do
    if not c:find(" ") and starts(c, arglead) then
      table.insert(out, c)
    end
  end
  return out
end

local function fido(opts)
  local fido_api = require("fido")
  local text = opts.args or ""
  if opts.range and opts.range > 0 then
    local mention, err = require("fido.mentions").range(0, opts.line1, opts.line2)
    if not mention then
      vim.notify("Fido: " .. err, vim.log.levels.WARN, { title = "Fido" })
      return
    end
    if text == "" then
      -- Let the user write the question around the mention.
      fido_api.open(true)
      require("fido.layout").set_input(mention .. " ", true)
      vim.cmd("startinsert!")
      return
    end
    text = mention .. " " .. text
  end
  if text == "" then
    fido_api.open(true)
    return
  end
  if not text:match("^/") then
    fido_api.open(false)
  end
  fido_api.submit(text)
end

--- Defines :Fido, :FidoPlan and :FidoCancel.
function M.define()
  local create = vim.api.nvim_create_user_command
  create("Fido", fido, {
    nargs = "*",
    range = true,
    complete = M.complete_fido,
    desc = "Fido: open the sidebar, or submit text (a /command, or a prompt; with a range, mention those lines)",
  })
  create("FidoPlan", function(opts)
    require("fido").plan(opts.args or "")
  end, {
    nargs = "?",
    complete = function(arglead)
      local out = {}
      for _, a in ipairs({ "clear", "hide", "toggle" }) do
        if starts(a, arglead) then
          table.insert(out, a)
        end
      end
      return out
    end,
    desc = "Fido: show and focus the plan window; :FidoPlan clear|hide|toggle",
  })
  create("FidoCancel", function()
    require("fido").cancel()
  end, { nargs = 0, desc = "Fido: cancel the running turn and any subagent" })
end

return M
