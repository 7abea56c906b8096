-- What the Go host asks of Neovim's own LSP client (vim.lsp, vim.diagnostic):
-- read-only queries (definition, references, hover, workspace symbols,
-- diagnostics) and watching the diagnostics around an edit. Every entry
-- point returns at once; an answer that needs a server goes back to the
-- host as a `fido_lsp` notification (id, answer) carrying what the servers
-- answered, unread: the host turns it into what the model sees.
--
-- Modules: clients (Neovim's client API across versions), buffers (the
-- hidden buffers Fido loads for servers), diagnostics (following and waiting
-- for them), queries and edits (the two kinds of calls).
local M = {}

local clients = require("fido.lsp.clients")
local config = require("fido.config")
local diagnostics = require("fido.lsp.diagnostics")
local edits = require("fido.lsp.edits")
local queries = require("fido.lsp.queries")

M.unsupported = clients.unsupported

---@return { diagnostics: boolean, wait_ms: integer, request_timeout_ms: integer }
local function options()
  local o = config.values.lsp or {}
  return {
    diagnostics = o.diagnostics ~= false,
    wait_ms = o.wait_ms or 2000,
    request_timeout_ms = o.request_timeout_ms or 5000,
  }
end

-- The function that answers call id on chan (once; an answer Neovim cannot
-- encode becomes an error, so the host never waits for nothing).
local function sender(chan, id)
  return function(answer)
    local ok, err = pcall(vim.rpcnotify, chan, "fido_lsp", id, answer)
    if not ok then
      pcall(
        vim.rpcnotify,
        chan,
        "fido_lsp",
        id,
        { error = "the language server's answer could not be sent: " .. tostring(err) }
      )
    end
  end
end

local function nilify(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

--- Starts following language servers and their diagnostics (once; a no-op
--- before Neovim 0.8).
function M.track()
  if not M.unsupported() then
    diagnostics.track()
  end
end

--- Starts one query; the answer arrives as fido_lsp(id, answer). Returns
--- { timeout_ms = n } (how long the host should wait), or { error = msg }.
---@param chan integer
---@param id integer
---@param q { method: string, path: string?, position: table?, query: string? }
---@return { timeout_ms: integer }|{ error: string }
function M.query(chan, id, q)
  local why = M.unsupported()
  if why then
    return { error = why }
  end
  if not queries.known(q.method) then
    return { error = "unknown LSP query " .. tostring(q.method) }
  end
  M.track()
  local opts = options()
  q.position = nilify(q.position)
  queries.run(id, q, opts, sender(chan, id))
  return { timeout_ms = math.max(opts.request_timeout_ms, opts.wait_ms) }
end

--- The host gave up on id (cancelled or timed out).
---@param id integer
function M.cancel(id)
  queries.cancel(id)
  edits.forget(id)
end

--- Before a tool changes files: records the LSP diagnostics of paths (nil:
--- every loaded buffer with a language server), see fido.lsp.edits. Returns
--- { disabled = true } when off, else { timeout_ms = n }.
---@param chan integer
---@param id integer
---@param paths string[]?
function M.watch(chan, id, paths)
  local opts = options()
  if M.unsupported() or not opts.diagnostics then
    return { disabled = true }
  end
  M.track()
  edits.watch(id, nilify(paths), opts, sender(chan, id))
  return { timeout_ms = opts.wait_ms }
end

--- After the tool ran: waits for the diagnostics of the new text of what
--- watch arg.watch recorded (arg.changed: the paths the tool wrote; nil:
--- buffers that were re-read). Returns { timeout_ms = n }.
---@param chan integer
---@param id integer
---@param arg { watch: integer, changed: string[]? }
function M.settle(chan, id, arg)
  local opts = options()
  edits.settle({ watch = arg.watch, changed = nilify(arg.changed) }, opts, sender(chan, id))
  return { timeout_ms = opts.wait_ms }
end

return M
