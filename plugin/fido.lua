-- Fido's user commands, defined lazily: nothing of Fido is loaded (and no
-- job is started) until a command runs or completes, and setup() is
-- optional. What each command does is in lua/fido/commands.lua.
if vim.g.loaded_fido then
  return
end
vim.g.loaded_fido = true

local function run(name)
  return function(opts)
    require("fido.commands").run[name](opts)
  end
end

local function complete(name)
  return function(...)
    return require("fido.commands").complete[name](...)
  end
end

local create = vim.api.nvim_create_user_command
create("Fido", run("Fido"), {
  nargs = "*",
  range = true,
  complete = complete("Fido"),
  desc = "Fido: open the sidebar, or submit text (a /command, or a prompt; with a range, mention those lines)",
})
create("FidoPlan", run("FidoPlan"), {
  nargs = "?",
  complete = complete("FidoPlan"),
  desc = "Fido: show and focus the plan window; :FidoPlan clear|hide|toggle",
})
create("FidoReview", run("FidoReview"), {
  nargs = "?",
  complete = complete("FidoReview"),
  desc = "Fido: review the newest turn's file changes hunk by hunk (:FidoReview all: the whole conversation)",
})
create("FidoRevert", run("FidoRevert"), {
  nargs = "*",
  bang = true,
  desc = "Fido: in :FidoReview, revert the hunk under the cursor (! the whole file); the reason goes to the model",
})
create("FidoCancel", run("FidoCancel"), { nargs = 0, desc = "Fido: cancel the running turn and any subagent" })
create("FidoSessions", run("FidoSessions"), {
  nargs = "?",
  complete = complete("FidoSessions"),
  desc = "Fido: resume a saved conversation of this workspace; :FidoSessions delete deletes one",
})
create("FidoApprove", run("FidoApprove"), {
  nargs = 0,
  desc = "Fido: open the waiting approval or question now (or reopen it)",
})
create("FidoShow", run("FidoShow"), {
  nargs = 1,
  complete = complete("FidoShow"),
  desc = "Fido: show the full text of a tool call (a command, code) in a scratch buffer",
})

-- @buffer and @selection mean the buffer the user worked in last, also
-- before Fido's first use.
require("fido.context").track()

-- :help fido without `make` (a plain clone on 'runtimepath'): generate the
-- tags of our own doc folder once, when it is writable.
local doc = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h:h") .. "/doc"
if vim.fn.filereadable(doc .. "/tags") == 0 and vim.fn.filewritable(doc) == 2 then
  pcall(vim.cmd, "silent! helptags " .. vim.fn.fnameescape(doc))
end
