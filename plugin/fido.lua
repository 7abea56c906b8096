-- Fido's user commands, defined lazily: nothing is loaded (and no job is
-- started) until a command runs, and setup() is optional.
if vim.g.loaded_fido then
  return
end
vim.g.loaded_fido = true

require("fido.commands").define()
require("fido.context").track()

-- :help fido without `make` (a plain clone on 'runtimepath'): generate the
-- tags of our own doc folder once, when it is writable.
local doc = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h:h") .. "/doc"
if vim.fn.filereadable(doc .. "/tags") == 0 and vim.fn.filewritable(doc) == 2 then
  pcall(vim.cmd, "silent! helptags " .. vim.fn.fnameescape(doc))
end
