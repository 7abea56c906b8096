-- User autocmds for users' own setups: FidoTurnDone, FidoApprovalNeeded,
-- FidoPlanUpdated (see :help fido-events).
local M = {}

--- Fires `User {pattern}` with data (the autocmd's `data` field, 0.8+). On
--- 0.7, which has no `data`, the same table is in vim.g.fido_event.
function M.fire(pattern, data)
  vim.g.fido_event = data
  local ok = pcall(vim.api.nvim_exec_autocmds, "User", { pattern = pattern, modeline = false, data = data })
  if not ok then
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = pattern, modeline = false })
  end
end

return M
