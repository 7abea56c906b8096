-- Mentions: "@path:12-40" for lines of a buffer, workspace-relative; the
-- <C-o> file picker; "@path" and editor-mention completion.
local M = {}

local config = require("fido.config")

--- The mentions of what the editor knows (fido.context expands them).
M.EDITOR = { "@buffer", "@diagnostics", "@diagnostics:all", "@quickfix", "@selection" }

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

--- "@path:l1-l2" ("@path:l1" for one line), or nil and a message. A buffer
--- with unsaved changes gives its lines instead, labelled with path and range.
function M.range(buf, l1, l2)
  local path = M.relpath(buf)
  if not path then
    return nil, "the current buffer has no file name to mention"
  end
  if l2 < l1 then
    l1, l2 = l2, l1
  end
  local ref = l1 == l2 and string.format("%s:%d", path, l1) or string.format("%s:%d-%d", path, l1, l2)
  if vim.bo[buf].modified then
    -- The model reads files from disk: give it the lines as the user sees them.
    local lines = vim.api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
    local block = { string.format("%s as in the unsaved buffer (the file on disk differs):", ref) }
    table.insert(block, "```" .. vim.bo[buf].filetype)
    vim.list_extend(block, lines)
    table.insert(block, "```")
    return table.concat(block, "\n") .. "\n"
  end
  return "@" .. ref
end

local MAX_FILES = 50000

--- Workspace files for the mention picker, workspace-relative: git's view
--- (tracked and untracked, ignore rules applied) in a repository, else a
--- walk that skips dot-directories.
function M.files(root)
  root = root or M.root()
  local out = vim.fn.systemlist({ "git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard" })
  if vim.v.shell_error == 0 then
    if #out > MAX_FILES then
      out = vim.list_slice(out, 1, MAX_FILES)
    end
    return out
  end
  out = {}
  local base = root:sub(-1) == "/" and root or root .. "/"
  for _, p in ipairs(vim.fn.globpath(root, "**/*", false, true)) do
    local rel = p:sub(#base + 1)
    if vim.fn.isdirectory(p) == 0 and not rel:match("^%.") and not rel:match("/%.") then
      table.insert(out, rel)
      if #out >= MAX_FILES then
        break
      end
    end
  end
  return out
end

--- Picks a workspace file with vim.ui.select and inserts "@path " at the
--- cursor of the input window, which target() returns (opening it when
--- needed; <C-o> in the input). From insert mode it leaves insert mode
--- first: the picker opens on the next tick, in normal mode, so pickers that
--- start their own prompt get typed keys.
---@param target fun(): integer
function M.pick(target)
  local insert = vim.api.nvim_get_mode().mode:sub(1, 1) == "i"
  if insert then
    -- Leaving insert mode moves the cursor left: keep where it was.
    local col = vim.api.nvim_win_get_cursor(0)[2]
    vim.cmd("stopinsert")
    vim.schedule(function()
      M.open_picker(col, target)
    end)
    return
  end
  M.open_picker(nil, target)
end

--- The picker itself; insert_col is the insert-mode cursor column when <C-o>
--- came from insert mode.
---@param insert_col integer?
---@param target fun(): integer
function M.open_picker(insert_col, target)
  local insert = insert_col ~= nil
  local files = M.files()
  if #files == 0 then
    vim.notify("Fido: no files to mention in " .. M.root(), vim.log.levels.WARN, { title = "Fido" })
    return
  end
  vim.ui.select(files, { prompt = "Mention a file" }, function(choice)
    if not choice then
      return
    end
    local w = target()
    vim.api.nvim_set_current_win(w)
    local row, col = unpack(vim.api.nvim_win_get_cursor(w))
    local line = vim.api.nvim_get_current_line()
    -- After the cursor character in normal mode, at the cursor in insert mode.
    local at = insert and math.min(insert_col, #line) or math.min(col + 1, #line)
    local text = "@" .. choice .. " "
    if at > 0 and line:sub(at, at):match("%S") then
      text = " " .. text
    end
    vim.api.nvim_set_current_line(line:sub(1, at) .. text .. line:sub(at + 1))
    vim.api.nvim_win_set_cursor(w, { row, at + #text })
    -- Go on typing after the mention (":startinsert!" when it ends the line,
    -- since insert mode cannot start past the last character otherwise).
    vim.cmd(at + #text >= #vim.api.nvim_get_current_line() and "startinsert!" or "startinsert")
  end)
end

local MAX_COMPLETIONS = 500

--- "@path" completion (:Fido and the input's omnifunc): the workspace files
--- of the <C-o> picker (git's ignore rules), those starting with the typed
--- path first, then those containing it.
function M.complete(arglead)
  local prefix = arglead:sub(2)
  local starts, contains = {}, {}
  for _, name in ipairs(M.EDITOR) do
    if name:sub(1, #arglead) == arglead then
      table.insert(starts, name)
    end
  end
  for _, f in ipairs(M.files()) do
    if f:sub(1, #prefix) == prefix then
      table.insert(starts, "@" .. f)
    elseif prefix ~= "" and f:find(prefix, 1, true) then
      table.insert(contains, "@" .. f)
    end
    if #starts >= MAX_COMPLETIONS then
      break
    end
  end
  vim.list_extend(starts, contains, 1, math.max(0, math.min(#contains, MAX_COMPLETIONS - #starts)))
  return starts
end

return M
