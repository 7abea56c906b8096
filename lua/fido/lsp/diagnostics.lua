-- LSP diagnostics as Neovim holds them (vim.diagnostic), and which text the
-- servers answered: per buffer, `sent` counts the didOpen/didChange
-- notifications sent (LspNotify, 0.9+) and `answered` is the value sent had
-- when the buffer last got LSP diagnostics. answered > n means "the servers
-- answered a text sent after mark n", which tells fresh diagnostics from
-- ones published for the text before an edit, or from the clearing Neovim
-- does while re-reading.
local M = {}

local api = vim.api
local clients = require("fido.lsp.clients")

local notify_event = vim.fn.exists("##LspNotify") == 1

local state = {
  tracking = false,
  pending = {}, -- buf -> true after LspAttach until its first diagnostics
  sent = {}, -- buf -> didOpen/didChange notifications sent
  answered = {}, -- buf -> sent when its last LSP diagnostics arrived
  waiters = {}, -- buf -> { fn(got) -> done, ... } called on its diagnostics
}

-- A DiagnosticChanged event counts as a language server's answer when it
-- carries an LSP namespace's diagnostics (or clears them: no data to tell).
local function from_lsp(data)
  local ds = type(data) == "table" and data.diagnostics or nil
  if type(ds) ~= "table" or #ds == 0 then
    return true
  end
  local ns = clients.namespaces()
  for _, d in ipairs(ds) do
    if ns[d.namespace] then
      return true
    end
  end
  return false
end

local function buf_of_uri(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  local b = vim.fn.bufnr(fname)
  if b > 0 then
    return b
  end
  return nil
end

local function wake(buf, got)
  local ws = state.waiters[buf]
  state.waiters[buf] = nil
  local keep = {}
  for _, w in ipairs(ws or {}) do
    local ok, done = pcall(w, got)
    if ok and not done then
      table.insert(keep, w)
    end
  end
  if #keep > 0 then
    state.waiters[buf] = state.waiters[buf] or {}
    vim.list_extend(state.waiters[buf], keep)
  end
end

--- Starts following LspAttach, LspNotify and DiagnosticChanged (once).
function M.track()
  if state.tracking then
    return
  end
  state.tracking = true
  local group = api.nvim_create_augroup("FidoLsp", { clear = true })
  api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(ev)
      state.pending[ev.buf] = true
    end,
  })
  if notify_event then
    api.nvim_create_autocmd("LspNotify", {
      group = group,
      callback = function(ev)
        local d = ev.data or {}
        if d.method ~= "textDocument/didOpen" and d.method ~= "textDocument/didChange" then
          return
        end
        local uri = d.params and d.params.textDocument and d.params.textDocument.uri
        local b = uri and buf_of_uri(uri) or ev.buf
        if b and b > 0 then
          state.sent[b] = (state.sent[b] or 0) + 1
        end
      end,
    })
  end
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(ev)
      if not from_lsp(ev.data) then
        return
      end
      state.pending[ev.buf] = nil
      state.answered[ev.buf] = state.sent[ev.buf] or 0
      wake(ev.buf, true)
    end,
  })
  api.nvim_create_autocmd("BufUnload", {
    group = group,
    callback = function(ev)
      -- :edit! unloads and re-reads in place: only a real unload ends waits.
      vim.schedule(function()
        if not api.nvim_buf_is_loaded(ev.buf) then
          state.pending[ev.buf] = nil
          wake(ev.buf, false)
        end
      end)
    end,
  })
end

--- Whether buf had a server attached and no diagnostics from it yet.
---@return boolean
function M.pending(buf)
  return state.pending[buf] == true
end

--- The mark for "diagnostics for text sent from now on".
---@return integer
function M.mark(buf)
  return state.sent[buf] or 0
end

--- Calls cb(true) once buf has LSP diagnostics for text sent after mark m
--- (any next diagnostics when m is nil or Neovim lacks LspNotify), cb(false)
--- after ms. Returns a function that gives up at once.
---@param buf integer
---@param m integer?
---@param ms integer
---@param cb fun(got: boolean)
---@return fun()
function M.wait(buf, m, ms, cb)
  local done = false
  local stop
  local function finish(got)
    if done then
      return true
    end
    done = true
    if stop then
      stop()
    end
    cb(got)
    return true
  end
  local function fresh()
    return notify_event and m ~= nil and (state.answered[buf] or -1) > m
  end
  if fresh() then
    finish(true)
    return function() end
  end
  state.waiters[buf] = state.waiters[buf] or {}
  table.insert(state.waiters[buf], function(got)
    if done then
      return true
    end
    if not got then
      return finish(false)
    end
    if notify_event and m ~= nil and not fresh() then
      return false -- diagnostics for the old text: keep waiting
    end
    return finish(true)
  end)
  stop = clients.after(math.max(ms, 0), function()
    finish(false)
  end)
  return function()
    finish(false)
  end
end

--- buf's diagnostics as Neovim holds them (0-based line, byte column,
--- severity 1-4), only those of the namespaces in the set ns when given.
--- The host gives them character columns and sorts them.
---@param buf integer
---@param ns table<integer, true>?
---@return { lnum: integer, col: integer, severity: integer, message: string, source: string? }[]
function M.of(buf, ns)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if not ns or ns[d.namespace] then
      table.insert(
        out,
        { lnum = d.lnum, col = d.col or 0, severity = d.severity, message = d.message or "", source = d.source }
      )
    end
  end
  return out
end

return M
