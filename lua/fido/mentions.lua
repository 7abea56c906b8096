-- Mentions: "@path:12-40" for lines of a buffer, workspace-relative.
local M = {}

local config = require("fido.config")

--- The workspace root: setup's root, else the current directory.
function M.root()
  return vim.fn.fnamemodify(config.values.root and vim.fn.expand(config.values.root) or vim.fn.getcwd(), ":p")
end

--- The path of buf relative to the workspace root (absolute when outside).
function M.relpath(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return nil
  end
  local abs = vim.fn.fnamemodify(name, ":p")
  local root = M.root()
  if root:sub(-1) ~= "/" then
    root = root .. "/"
  end
  if abs:sub(1, #root) == root then
    return abs:sub(#root + 1)
  end
  return abs
end

--- "@path:l1-l2" ("@path:l1" for one line), or nil and a message.
function M.range(buf, l1, l2)
  local path = M.relpath(buf)
  if not path then
    return nil, "the current buffer has no file name to mention"
  end
  if l2 < l1 then
    l1, l2 = l2, l1
  end
  if l1 == l2 then
    return string.format("@%s:%d", path, l1)
  end
  return string.format("@%s:%d-%d", path, l1, l2)
end

return M
