-- The buffers Fido loads so that the user's LSP configuration attaches a
-- server to a file that is not open: hidden (unlisted, no swap file), at
-- most MAX_HIDDEN of them, given back when no server came. Neovim reads
-- the file into the buffer; Fido reads no file here.
local M = {}

local api = vim.api

M.MAX_HIDDEN = 32 -- files Fido keeps loaded in hidden buffers
M.MAX_LOAD = 4 * 1024 * 1024 -- bytes: larger files are not loaded for a server

local state = {
  hidden = {}, -- buffers Fido loaded, oldest first
  created = {}, -- buf -> true when load() created it (release wipes it)
}

--- The loaded buffer of path (symlinks resolved), or nil.
---@param path string
---@return integer?
function M.loaded(path)
  local want = vim.fn.resolve(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and (name == path or vim.fn.resolve(name) == want) then
        return buf
      end
    end
  end
  return nil
end

-- Unloads the oldest hidden buffers Fido loaded beyond MAX_HIDDEN (never
-- one shown in a window or with changes).
local function trim_hidden()
  local keep = {}
  local extra = #state.hidden - M.MAX_HIDDEN
  for _, b in ipairs(state.hidden) do
    local visible = api.nvim_buf_is_valid(b) and #vim.fn.win_findbuf(b) > 0
    if extra > 0 and api.nvim_buf_is_valid(b) and not visible and not vim.bo[b].modified then
      pcall(api.nvim_buf_delete, b, { unload = true })
      extra = extra - 1
    elseif api.nvim_buf_is_valid(b) and api.nvim_buf_is_loaded(b) then
      table.insert(keep, b)
    end
  end
  state.hidden = keep
end

-- Whether path is a regular file of at most MAX_LOAD bytes, from stat
-- alone: opening a FIFO (filereadable() does) waits for a writer, reading
-- a device never ends.
local function loadable(path)
  local st = (vim.uv or vim.loop).fs_stat(path)
  return st ~= nil and st.type == "file" and st.size <= M.MAX_LOAD
end

--- The loaded buffer of path, loading the file into a hidden buffer when
--- needed. Returns buf, fresh (it was loaded now); nil when the file is not
--- a regular file, cannot be read or is larger than MAX_LOAD bytes.
---@param path string
---@return integer?, boolean
function M.load(path)
  local b = M.loaded(path)
  if b then
    return b, false
  end
  if not loadable(path) or vim.fn.filereadable(path) == 0 then
    return nil, false
  end
  local existed = vim.fn.bufnr(path) > 0
  b = vim.fn.bufadd(path)
  pcall(function()
    vim.bo[b].swapfile = false
  end)
  local ok = pcall(vim.fn.bufload, b)
  if not ok or not api.nvim_buf_is_loaded(b) then
    return nil, false
  end
  state.created[b] = not existed
  table.insert(state.hidden, b)
  trim_hidden()
  return b, true
end

--- Gives back a buffer load() loaded when no language server came for it:
--- wiped when load() created it, else unloaded again.
---@param b integer
function M.release(b)
  if not api.nvim_buf_is_valid(b) or #vim.fn.win_findbuf(b) > 0 or vim.bo[b].modified then
    return
  end
  for i, h in ipairs(state.hidden) do
    if h == b then
      table.remove(state.hidden, i)
      break
    end
  end
  if state.created[b] then
    pcall(api.nvim_buf_delete, b, { force = true })
  else
    pcall(api.nvim_buf_delete, b, { unload = true })
  end
  state.created[b] = nil
end

--- Why no server answers for buf (the file at path), for the model.
---@return string
function M.no_server(buf, path)
  local ft = vim.bo[buf].filetype
  return string.format(
    "no language server is attached to %s (%s); configure one for that file type in Neovim (vim.lsp.enable, nvim-lspconfig), or use ripgrep and read_file instead",
    vim.fn.fnamemodify(path, ":t"),
    ft == "" and "no filetype detected" or ("filetype " .. ft)
  )
end

return M
