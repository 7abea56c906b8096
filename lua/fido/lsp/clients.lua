-- Neovim's LSP client API as Fido uses it, the same from 0.8 to 0.12: which
-- clients serve a buffer, whether they are ready and answer a method,
-- requests and their cancelling, the diagnostic namespaces of the clients,
-- and waiting for a buffer's clients to be ready.
local M = {}

local api = vim.api

-- 0.11 turned client methods into `client:method()` (the dot form warns).
local colon_api = vim.fn.has("nvim-0.11") == 1

--- nil when this Neovim can serve the LSP tools, else why not.
---@return string?
function M.unsupported()
  if vim.fn.has("nvim-0.8") == 0 or type(vim.lsp) ~= "table" or type(vim.lsp.start) ~= "function" then
    local v = vim.version()
    return string.format(
      "the LSP tools and post-edit diagnostics need Neovim 0.8 or later (vim.lsp.start, LspAttach, DiagnosticChanged data); this is Neovim %d.%d.%d",
      v.major,
      v.minor,
      v.patch
    )
  end
  return nil
end

--- A one-shot timer; returns a function that stops it.
---@param ms integer
---@param fn function
---@return fun()
function M.after(ms, fn)
  local timer = vim.defer_fn(fn, ms)
  return function()
    pcall(function()
      if not timer:is_closing() then
        timer:stop()
        timer:close()
      end
    end)
  end
end

--- The clients attached to buf (uninitialized: those still starting too).
function M.of(buf, uninitialized)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf, _uninitialized = uninitialized })
  end
  return vim.lsp.get_active_clients({ bufnr = buf })
end

--- Every running client.
function M.all()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

--- Whether client c finished initializing.
function M.is_ready(c)
  if c.initialized ~= nil then
    return c.initialized == true
  end
  return type(c.server_capabilities) == "table" and next(c.server_capabilities) ~= nil
end

local capability = {
  ["textDocument/definition"] = "definitionProvider",
  ["textDocument/references"] = "referencesProvider",
  ["textDocument/hover"] = "hoverProvider",
  ["workspace/symbol"] = "workspaceSymbolProvider",
}

--- Whether client c answers method (for buf).
function M.supports(c, method, buf)
  if colon_api then
    return c:supports_method(method, buf)
  end
  if type(c.supports_method) == "function" then
    return c.supports_method(method, { bufnr = buf })
  end
  local caps = c.server_capabilities or {}
  return caps[capability[method]] and true or false
end

--- Sends a request; returns ok, request id.
function M.request(c, method, params, handler, buf)
  if colon_api then
    return c:request(method, params, handler, buf)
  end
  return c.request(method, params, handler, buf)
end

--- Cancels request rid of client c (no error when it already ended).
function M.cancel(c, rid)
  pcall(function()
    if colon_api then
      c:cancel_request(rid)
    else
      c.cancel_request(rid)
    end
  end)
end

--- The position encoding of client c.
---@return "utf-8"|"utf-16"|"utf-32"
function M.encoding(c)
  return c.offset_encoding or "utf-16"
end

--- The clients' names, each once.
---@return string[]
function M.names(cs)
  local out, seen = {}, {}
  for _, c in ipairs(cs) do
    if not seen[c.name] then
      seen[c.name] = true
      table.insert(out, c.name)
    end
  end
  return out
end

--- The diagnostic namespaces of every LSP client, as a set (not only those
--- attached to a buffer now: Neovim 0.12 detaches and re-attaches while it
--- re-reads one).
---@return table<integer, true>
function M.namespaces()
  local set = {}
  for _, c in ipairs(vim.lsp.get_clients and vim.lsp.get_clients({ _uninitialized = true }) or M.all()) do
    pcall(function()
      set[vim.lsp.diagnostic.get_namespace(c.id)] = true
    end)
    pcall(function()
      set[vim.lsp.diagnostic.get_namespace(c.id, true)] = true
    end)
  end
  return set
end

--- Calls cb(clients) with buf's initialized clients: at once when one is
--- ready (or none is attached: {}), else once one is (at most ms).
function M.when_ready(buf, ms, cb)
  local cs = M.of(buf, true)
  local function ready_ones()
    local out = {}
    for _, c in ipairs(M.of(buf, true)) do
      if M.is_ready(c) then
        table.insert(out, c)
      end
    end
    return out
  end
  if #cs == 0 then
    return cb({})
  end
  local r = ready_ones()
  if #r > 0 then
    return cb(r)
  end
  local done, au = false, nil
  local stop
  local function finish()
    if done then
      return
    end
    done = true
    if stop then
      stop()
    end
    if au then
      pcall(api.nvim_del_autocmd, au)
    end
    cb(ready_ones())
  end
  au = api.nvim_create_autocmd("LspAttach", {
    buffer = buf,
    callback = function()
      vim.schedule(function()
        if #ready_ones() > 0 then
          finish()
        end
      end)
    end,
  })
  stop = M.after(math.max(ms, 0), finish)
end

return M
