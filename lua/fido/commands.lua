-- User commands: what each does and how it completes. plugin/fido.lua
-- defines them (so they exist without setup()) and loads this module when
-- one runs or completes, which loads the rest of Fido.
local M = {}

local fido = require("fido")
local layout = require("fido.layout")
local mentions = require("fido.mentions")
local questions = require("fido.questions")
local review = require("fido.review")
local slash = require("fido.slash")

--- The built-in slash commands (see fido.slash).
M.slash = slash.names

--- Every slash command the running host knows, each { name, args, help }.
M.all = slash.all

--- The model ids the running host knows.
M.models = slash.models

local function starts(s, prefix)
  return s:sub(1, #prefix) == prefix
end

local function matching(candidates, arglead)
  local out = {}
  for _, a in ipairs(candidates) do
    if starts(a, arglead) then
      table.insert(out, a)
    end
  end
  return out
end

--- Completion of :Fido: slash commands and their arguments, mentions.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete_fido(arglead, cmdline)
  if starts(arglead, "@") then
    return mentions.complete(arglead)
  end
  local args = cmdline:gsub("^%s*%S+%s*", "", 1)
  if not starts(args, "/") then
    return {}
  end
  local cmd, rest = args:match("^(%S+)%s+(.*)$")
  if cmd then
    local candidates = slash.args[cmd] or {}
    if cmd == "/model" then
      -- Model ids from the host's cached list (filled by /model or at start).
      candidates = vim.list_extend({ "refresh" }, slash.models())
    end
    return matching(candidates, rest)
  end
  local out = {}
  for _, c in ipairs(slash.all()) do
    if starts(c.name, arglead) then
      table.insert(out, c.name)
    end
  end
  return out
end

--- What each command does, by name (opts: nvim_create_user_command's).
---@type table<string, fun(opts: table)>
M.run = {}

function M.run.Fido(opts)
  local text = opts.args or ""
  if opts.range and opts.range > 0 then
    local mention, err = mentions.range(0, opts.line1, opts.line2)
    if not mention then
      vim.notify("Fido: " .. err, vim.log.levels.WARN, { title = "Fido" })
      return
    end
    if text == "" then
      -- Let the user write the question around the mention.
      fido.open(true)
      layout.set_input(mention .. " ", true)
      vim.cmd("startinsert!")
      return
    end
    text = mention .. " " .. text
  end
  if text == "" then
    fido.open(true)
    return
  end
  if not text:match("^/") then
    fido.open(false)
  end
  fido.submit(text)
end

function M.run.FidoPlan(opts)
  fido.plan(opts.args or "")
end

function M.run.FidoReview(opts)
  review.review(opts.args or "")
end

function M.run.FidoRevert(opts)
  review.revert(opts.bang, opts.args or "")
end

function M.run.FidoCancel()
  fido.cancel()
end

function M.run.FidoSessions(opts)
  local arg = opts.args or ""
  if arg ~= "" and arg ~= "delete" then
    vim.notify("Fido: :FidoSessions takes nothing or delete", vim.log.levels.ERROR, { title = "Fido" })
    return
  end
  fido.open(false)
  fido.submit(arg == "" and "/sessions" or "/sessions delete")
end

function M.run.FidoApprove()
  questions.reopen()
end

function M.run.FidoShow(opts)
  questions.show(opts.args)
end

--- How each command's arguments complete, by name.
---@type table<string, fun(arglead: string, cmdline: string, cursorpos: integer): string[]>
M.complete = {
  Fido = M.complete_fido,
  FidoPlan = function(arglead)
    return matching({ "clear", "hide", "toggle" }, arglead)
  end,
  FidoReview = function(arglead)
    return matching({ "all" }, arglead)
  end,
  FidoSessions = function(arglead)
    return matching({ "delete" }, arglead)
  end,
  FidoShow = function(arglead)
    return matching(questions.calls(), arglead)
  end,
}

return M
