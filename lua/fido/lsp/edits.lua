-- The diagnostics around a tool's edit: watch() records them before (loading
-- files that are not open so their servers attach), settle() waits for the
-- servers to answer the new text after. Both answer the host later with the
-- diagnostics as Neovim holds them; the host compares them.
local M = {}

local api = vim.api
local buffers = require("fido.lsp.buffers")
local clients = require("fido.lsp.clients")
local diagnostics = require("fido.lsp.diagnostics")

local watches = {} -- id -> { files, new } between watch and settle

-- Waits (at most ms, all files at once) for each file's clients (unless
-- f.clients is known) and, when wait(f) says so, for its diagnostics after
-- mark f.mark (nil: the next ones); then done(list of { file, got }).
local function gather(files, ms, wait, done)
  local left = #files
  local results = {}
  if left == 0 then
    return done(results)
  end
  local deadline = vim.loop.now() + ms
  local function one(i, f)
    if #f.clients == 0 or not wait(f) then
      results[i] = { file = f, got = #f.clients > 0 }
      left = left - 1
      if left == 0 then
        done(results)
      end
      return
    end
    diagnostics.wait(f.buf, f.mark, deadline - vim.loop.now(), function(got)
      results[i] = { file = f, got = got }
      left = left - 1
      if left == 0 then
        done(results)
      end
    end)
  end
  for i, f in ipairs(files) do
    if f.clients then
      one(i, f)
    else
      clients.when_ready(f.buf, ms, function(ready)
        f.clients = ready
        one(i, f)
      end)
    end
  end
end

--- Records (scheduled) the LSP diagnostics of paths (nil: every loaded
--- buffer with a language server), loading files that are not open into
--- hidden buffers; send({ files }) once each file's servers are ready and,
--- for a file just loaded, published (at most opts.wait_ms).
---@param id integer
---@param paths string[]?
---@param opts { wait_ms: integer }
---@param send fun(answer: table)
function M.watch(id, paths, opts, send)
  vim.schedule(function()
    local w = { files = {}, new = {} }
    watches[id] = w
    if paths == nil then
      for _, b in ipairs(api.nvim_list_bufs()) do
        local name = api.nvim_buf_get_name(b)
        if api.nvim_buf_is_loaded(b) and name ~= "" and vim.bo[b].buftype == "" and #clients.of(b, true) > 0 then
          table.insert(w.files, { buf = b, path = name })
        end
      end
    else
      for _, p in ipairs(paths) do
        local b, fresh = buffers.load(p)
        if b then
          table.insert(w.files, { buf = b, path = p, fresh = fresh })
        else
          w.new[p] = true
        end
      end
    end
    gather(w.files, opts.wait_ms, function(f)
      f.waited = f.fresh or diagnostics.pending(f.buf)
      return f.waited
    end, function(results)
      local files = {}
      local kept = {}
      for _, r in ipairs(results) do
        local f = r.file
        if #f.clients == 0 and f.fresh then
          buffers.release(f.buf)
        elseif #f.clients > 0 and api.nvim_buf_is_valid(f.buf) then
          f.tick = api.nvim_buf_get_changedtick(f.buf)
          f.mark = diagnostics.mark(f.buf)
          table.insert(kept, f)
          table.insert(files, {
            path = f.path,
            servers = clients.names(f.clients),
            diagnostics = diagnostics.of(f.buf, clients.namespaces()),
            fresh = r.got or not f.waited,
          })
        end
      end
      w.files = kept
      if watches[id] == w then
        send({ files = files })
      end
    end)
  end)
end

--- After the tool ran (and its buffer reloads, scheduled before this):
--- waits for the diagnostics of the new text of each file watch `arg.watch`
--- watched that changed (arg.changed: the paths the tool wrote; nil: buffers
--- that were re-read) and of files it created that a server serves, then
--- send({ files }).
---@param arg { watch: integer, changed: string[]? }
---@param opts { wait_ms: integer }
---@param send fun(answer: table)
function M.settle(arg, opts, send)
  local w = watches[arg.watch]
  watches[arg.watch] = nil
  local changed = arg.changed
  vim.schedule(function()
    local set = {}
    for _, p in ipairs(changed or {}) do
      set[p] = true
    end
    local files = {}
    for _, f in ipairs(w and w.files or {}) do
      local valid = api.nvim_buf_is_valid(f.buf) and api.nvim_buf_is_loaded(f.buf)
      if valid and (set[f.path] or (changed == nil and api.nvim_buf_get_changedtick(f.buf) ~= f.tick)) then
        table.insert(files, f)
      end
    end
    for p in pairs(w and w.new or {}) do
      if set[p] then
        local b, fresh = buffers.load(p)
        if b then
          table.insert(files, { buf = b, path = p, fresh = fresh })
        end
      end
    end
    gather(files, opts.wait_ms, function()
      return true
    end, function(results)
      local out = {}
      for _, r in ipairs(results) do
        local f = r.file
        if #f.clients == 0 and f.fresh then
          buffers.release(f.buf)
        elseif #f.clients > 0 and api.nvim_buf_is_valid(f.buf) then
          table.insert(out, {
            path = f.path,
            servers = clients.names(f.clients),
            diagnostics = diagnostics.of(f.buf, clients.namespaces()),
            changed = true,
            fresh = r.got,
          })
        end
      end
      send({ files = out })
    end)
  end)
end

--- Forgets watch id (the host gave up on it).
---@param id integer
function M.forget(id)
  watches[id] = nil
end

return M
