-- Fido's user commands, defined lazily: nothing is loaded (and no job is
-- started) until a command runs, and setup() is optional.
if vim.g.loaded_fido then
  return
end
vim.g.loaded_fido = true

require("fido.commands").define()
