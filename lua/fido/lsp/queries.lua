-- The read-only questions the host asks (definition, references, hover,
-- workspace symbols, diagnostics): each request goes to the servers with a
-- callback, and their answers go back to the host as they came (the host
-- reads them: locations, hover text, symbol kinds, character columns).
-- The position asked about comes from the host in every encoding; the
-- server's own (offset_encoding) is sent.
local M = {}

local api = vim.api
local buffers = require("fido.lsp.buffers")
local clients = require("fido.lsp.clients")
local diagnostics = require("fido.lsp.diagnostics")

local calls = {} -- id -> { cancel = fn } while its requests run

local methods = {
  definition = "textDocument/definition",
  references = "textDocument/references",
  hover = "textDocument/hover",
}

-- Sends method to every client in cs; done(results, timed_out) gets one
-- { server, encoding, result, error } per answer, once all answered or ms
-- passed (then with what arrived and timed_out = true).
local function ask_all(id, cs, method, params_of, buf, ms, done)
  local results, left, finished = {}, #cs, false
  local sent = {}
  local stop
  local function cancel_sent()
    for _, s in ipairs(sent) do
      clients.cancel(s[1], s[2])
    end
  end
  local function finish(timed_out)
    if finished then
      return
    end
    finished = true
    calls[id] = nil
    if stop then
      stop()
    end
    if timed_out then
      cancel_sent()
    end
    done(results, timed_out)
  end
  calls[id] = {
    cancel = function()
      cancel_sent()
      finished = true
      calls[id] = nil
      if stop then
        stop()
      end
    end,
  }
  for _, c in ipairs(cs) do
    local ok, rid = clients.request(c, method, params_of(c), function(err, result)
      table.insert(results, { server = c.name, encoding = clients.encoding(c), result = result, error = err })
      left = left - 1
      if left == 0 then
        finish(false)
      end
    end, buf)
    if ok and rid then
      table.insert(sent, { c, rid })
    else
      left = left - 1
    end
  end
  if left <= 0 then
    return finish(false)
  end
  stop = clients.after(ms, function()
    finish(true)
  end)
end

local function answer(cs, results, timed_out, ms)
  return {
    server = table.concat(clients.names(cs), ", "),
    results = results,
    timed_out = timed_out or nil,
    timeout_ms = ms,
  }
end

local function position_query(id, q, opts, send)
  local method = methods[q.method]
  local buf, fresh = buffers.load(q.path)
  if not buf then
    return send({ error = "cannot read " .. q.path .. " (missing, unreadable, not a regular file or too large)" })
  end
  local pos = q.position or {}
  clients.when_ready(buf, opts.request_timeout_ms, function(ready)
    local cs = {}
    for _, c in ipairs(ready) do
      if clients.supports(c, method, buf) then
        table.insert(cs, c)
      end
    end
    if #cs == 0 then
      if #ready > 0 then
        return send({
          error = string.format(
            "the language server of %s (%s) does not answer %s",
            vim.fn.fnamemodify(q.path, ":t"),
            table.concat(clients.names(ready), ", "),
            method
          ),
        })
      end
      local msg = buffers.no_server(buf, q.path)
      if fresh then
        buffers.release(buf)
      end
      return send({ error = msg })
    end
    local uri = vim.uri_from_bufnr(buf)
    ask_all(
      id,
      cs,
      method,
      function(c)
        local p = {
          textDocument = { uri = uri },
          position = { line = pos.line or 0, character = pos[clients.encoding(c)] or 0 },
        }
        if q.method == "references" then
          p.context = { includeDeclaration = false }
        end
        return p
      end,
      buf,
      opts.request_timeout_ms,
      function(results, timed_out)
        send(answer(cs, results, timed_out, opts.request_timeout_ms))
      end
    )
  end)
end

local function symbols_query(id, q, opts, send)
  local cs = {}
  for _, c in ipairs(clients.all()) do
    local buf = next(c.attached_buffers or {})
    if clients.is_ready(c) and clients.supports(c, "workspace/symbol", buf) then
      table.insert(cs, c)
    end
  end
  if #cs == 0 then
    return send({
      error = "no running language server answers workspace symbols; they start when a file of their type is open (lsp_definition or lsp_diagnostics on a file starts its server)",
    })
  end
  ask_all(
    id,
    cs,
    "workspace/symbol",
    function()
      return { query = q.query or "" }
    end,
    nil,
    opts.request_timeout_ms,
    function(results, timed_out)
      send(answer(cs, results, timed_out, opts.request_timeout_ms))
    end
  )
end

local function diagnostics_query(_, q, opts, send)
  if not q.path or q.path == "" then
    local files = {}
    for _, b in ipairs(api.nvim_list_bufs()) do
      local name = api.nvim_buf_get_name(b)
      if api.nvim_buf_is_loaded(b) and name ~= "" and vim.bo[b].buftype == "" then
        local ds = diagnostics.of(b)
        if #ds > 0 then
          table.insert(files, { path = name, diagnostics = ds })
        end
      end
    end
    return send({ files = files })
  end
  local buf, fresh = buffers.load(q.path)
  if not buf then
    return send({ error = "cannot read " .. q.path })
  end
  clients.when_ready(buf, opts.wait_ms, function(ready)
    local function reply()
      send({
        server = table.concat(clients.names(ready), ", "),
        files = { { path = q.path, diagnostics = diagnostics.of(buf) } },
      })
    end
    if #ready == 0 then
      if #vim.diagnostic.get(buf) > 0 then
        return reply()
      end
      local msg = buffers.no_server(buf, q.path)
      if fresh then
        buffers.release(buf)
      end
      return send({ error = msg })
    end
    if fresh or diagnostics.pending(buf) then
      diagnostics.wait(buf, nil, opts.wait_ms, reply)
    else
      reply()
    end
  end)
end

local runners = {
  definition = position_query,
  references = position_query,
  hover = position_query,
  symbols = symbols_query,
  diagnostics = diagnostics_query,
}

--- Whether method is a query this module answers.
---@param method string
---@return boolean
function M.known(method)
  return runners[method] ~= nil
end

--- Runs query q ({ method, path, position, query }) scheduled; send(answer)
--- gets the answer once (a refusal is { error = msg }).
---@param id integer
---@param q table
---@param opts { wait_ms: integer, request_timeout_ms: integer }
---@param send fun(answer: table)
function M.run(id, q, opts, send)
  vim.schedule(function()
    local ok, err = pcall(runners[q.method], id, q, opts, send)
    if not ok then
      send({ error = "internal error: " .. tostring(err) })
    end
  end)
end

--- Cancels the requests of query id (the host gave up on it).
---@param id integer
function M.cancel(id)
  local c = calls[id]
  calls[id] = nil
  if c then
    pcall(c.cancel)
  end
end

return M
