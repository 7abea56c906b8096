-- User commands and their completion.
local M = {}

-- Slash commands (the host's agent.Commands; a test keeps them in step).
M.slash = {
  "/plan",
  "/plan clear",
  "/suspend",
  "/recall",
  "/undo",
  "/undo revert",
  "/rewind",
  "/edits",
  "/edits auto",
  "/edits review",
  "/reasoning",
  "/new",
  "/sessions",
  "/sessions delete",
  "/rename",
  "/fork",
  "/compact",
  "/mode",
  "/model",
  "/model refresh",
  "/permissions",
  "/reload-instructions",
  "/help",
  "/quit",
  "/mcp",
  "/mcp reload",
  "/mcp trust reset",
}
local sub = {
  ["/plan"] = { "clear" },
  ["/edits"] = { "auto", "review" },
  ["/undo"] = { "revert" },
  ["/reasoning"] = { "minimal", "low", "medium", "high", "default" },
  ["/sessions"] = { "delete" },
  ["/mode"] = { "plan", "default", "auto-edit" },
  ["/mcp"] = { "reload", "trust reset" },
}

local function starts(s, prefix)
  return s:sub(1, #prefix) == prefix
end

--- Every slash command: the built-in ones, then those the running host finds
--- in .fido/commands, ~/.config/fido/commands and .claude/commands (asked
--- afresh each time, so a new file needs no restart). Each item is
--- { name, args, help }.
function M.all()
  local out, seen = {}, {}
  local chan = require("fido.host").chan()
  if chan then
    local ok, list = pcall(vim.rpcrequest, chan, "fido_commands")
    if ok and type(list) == "table" then
      for _, c in ipairs(list) do
        if not seen[c.name] then
          seen[c.name] = true
          table.insert(out, c)
        end
      end
    end
  end
  for _, name in ipairs(M.slash) do
    if not name:find(" ") and not seen[name] then
      seen[name] = true
      table.insert(out, { name = name, args = "", help = "" })
    end
  end
  return out
end

--- The model ids the running host knows (its cached model list).
function M.models()
  local chan = require("fido.host").chan()
  if not chan then
    return {}
  end
  local ok, list = pcall(vim.rpcrequest, chan, "fido_models")
  return (ok and type(list) == "table") and list or {}
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
    local candidates = sub[cmd] or {}
    if cmd == "/model" then
      -- Model ids from the host's cached list (filled by /model or at start).
      candidates = vim.list_extend({ "refresh" }, M.models())
    end
    for _, a in ipairs(candidates) do
      if starts(a, rest) then
        table.insert(out, a)
      end
    end
    return out
  end
  local out = {}
  for _, c in ipairs(M.all()) do
    if starts(c.name, arglead) then
      table.insert(out, c.name)
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

--- Defines :Fido, :FidoPlan, :FidoReview, :FidoRevert, :FidoCancel,
--- :FidoSessions, :FidoApprove and :FidoShow.
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
  create("FidoReview", function(opts)
    require("fido.review").review(opts.args or "")
  end, {
    nargs = "?",
    complete = function(arglead)
      return starts("all", arglead) and { "all" } or {}
    end,
    desc = "Fido: review the newest turn's file changes hunk by hunk (:FidoReview all: the whole conversation)",
  })
  create("FidoRevert", function(opts)
    require("fido.review").revert(opts.bang, opts.args or "")
  end, {
    nargs = "*",
    bang = true,
    desc = "Fido: in :FidoReview, revert the hunk under the cursor (! the whole file); the reason goes to the model",
  })
  create("FidoCancel", function()
    require("fido").cancel()
  end, { nargs = 0, desc = "Fido: cancel the running turn and any subagent" })
  create("FidoSessions", function(opts)
    local arg = opts.args or ""
    if arg ~= "" and arg ~= "delete" then
      vim.notify("Fido: :FidoSessions takes nothing or delete", vim.log.levels.ERROR, { title = "Fido" })
      return
    end
    require("fido").open(false)
    require("fido").submit(arg == "" and "/sessions" or "/sessions delete")
  end, {
    nargs = "?",
    complete = function(arglead)
      return starts("delete", arglead) and { "delete" } or {}
    end,
    desc = "Fido: resume a saved conversation of this workspace; :FidoSessions delete deletes one",
  })
  create("FidoApprove", function()
    require("fido.questions").reopen()
  end, { nargs = 0, desc = "Fido: open the waiting approval or question now (or reopen it)" })
  create("FidoShow", function(opts)
    require("fido.questions").show(opts.args)
  end, {
    nargs = 1,
    complete = function(arglead)
      local out = {}
      for _, c in ipairs(require("fido.questions").calls()) do
        if starts(c, arglead) then
          table.insert(out, c)
        end
      end
      return out
    end,
    desc = "Fido: show the full text of a tool call (a command, code) in a scratch buffer",
  })
end

return M
