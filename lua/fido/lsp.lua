-- What the Go host asks of Neovim's own LSP client (vim.lsp, vim.diagnostic):
-- read-only queries (definition, references, hover, workspace symbols,
-- diagnostics) and watching the diagnostics around an edit. Every entry
-- point returns at once; answers that need a server go back to the host as
-- a `fido_lsp` notification (id, result), so Neovim never waits for them.
local M = {}

local api = vim.api
local config = require("fido.config")

-- 0.11 turned client methods into `client:method()` (the dot form warns).
local colon_api = vim.fn.has("nvim-0.11") == 1
local severities = { "error", "warning", "info", "hint" }
local max_text = 300 -- bytes of a result line's text
local max_hidden = 32 -- files Fido keeps loaded in hidden buffers
local max_load = 4 * 1024 * 1024 -- bytes: larger files are not loaded for a server

local state = {
  tracking = false,
  pending = {}, -- buf -> true after LspAttach until its first diagnostics
  sent = {}, -- buf -> didOpen/didChange notifications sent (see tracking)
  answered = {}, -- buf -> sent when its last LSP diagnostics arrived
  waiters = {}, -- buf -> { fn(got) -> done, ... } called on its diagnostics
  hidden = {}, -- buffers Fido loaded, oldest first
  created = {}, -- buf -> true when load() created it (release wipes it)
  watches = {}, -- id -> watched files (between watch and settle)
  calls = {}, -- id -> { cancel = fn }
}

--- nil when this Neovim can serve the LSP tools, else why not.
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

local function options()
  local o = config.values.lsp or {}
  return {
    diagnostics = o.diagnostics ~= false,
    wait_ms = o.wait_ms or 2000,
    request_timeout_ms = o.request_timeout_ms or 5000,
  }
end

local function reply(chan, id, result)
  pcall(vim.rpcnotify, chan, "fido_lsp", id, result)
end

-- One-shot timer; returns a function that stops it.
local function after(ms, fn)
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

---------------------------------------------------------------- clients

local function clients_of(buf, uninitialized)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf, _uninitialized = uninitialized })
  end
  return vim.lsp.get_active_clients({ bufnr = buf })
end

local function all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

local function is_ready(c)
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

local function supports(c, method, buf)
  if colon_api then
    return c:supports_method(method, buf)
  end
  if type(c.supports_method) == "function" then
    return c.supports_method(method, { bufnr = buf })
  end
  local caps = c.server_capabilities or {}
  return caps[capability[method]] and true or false
end

local function request(c, method, params, handler, buf)
  if colon_api then
    return c:request(method, params, handler, buf)
  end
  return c.request(method, params, handler, buf)
end

local function cancel_request(c, rid)
  pcall(function()
    if colon_api then
      c:cancel_request(rid)
    else
      c.cancel_request(rid)
    end
  end)
end

local function names(cs)
  local out, seen = {}, {}
  for _, c in ipairs(cs) do
    if not seen[c.name] then
      seen[c.name] = true
      table.insert(out, c.name)
    end
  end
  return out
end

-- The diagnostic namespaces of every LSP client (not only those attached to
-- a buffer now: Neovim 0.12 detaches and re-attaches while it re-reads one).
local function namespaces()
  local set = {}
  for _, c in ipairs(vim.lsp.get_clients and vim.lsp.get_clients({ _uninitialized = true }) or all_clients()) do
    pcall(function()
      set[vim.lsp.diagnostic.get_namespace(c.id)] = true
    end)
    pcall(function()
      set[vim.lsp.diagnostic.get_namespace(c.id, true)] = true
    end)
  end
  return set
end

---------------------------------------------------------------- tracking

-- Per buffer: sent counts the didOpen/didChange notifications sent for it
-- (LspNotify, 0.9+); answered is the value sent had when the buffer last got
-- LSP diagnostics. answered > n means "the servers answered a text sent
-- after mark n", which tells fresh diagnostics from ones published for the
-- text before an edit, or from the clearing Neovim does while re-reading.
local notify_event = vim.fn.exists("##LspNotify") == 1

-- A DiagnosticChanged event counts as a language server's answer when it
-- carries an LSP namespace's diagnostics (or clears them: no data to tell).
local function from_lsp(data)
  local ds = type(data) == "table" and data.diagnostics or nil
  if type(ds) ~= "table" or #ds == 0 then
    return true
  end
  local ns = namespaces()
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
  if state.tracking or M.unsupported() then
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

-- The mark for "diagnostics for text sent from now on".
local function mark(buf)
  return state.sent[buf] or 0
end

-- Calls cb(true) once buf has LSP diagnostics for text sent after mark m
-- (any next diagnostics when m is nil or Neovim lacks LspNotify), cb(false)
-- after ms. Returns a function that gives up at once.
local function diagnostics_after(buf, m, ms, cb)
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
  stop = after(math.max(ms, 0), function()
    finish(false)
  end)
  return function()
    finish(false)
  end
end

-- Calls cb(clients) with buf's initialized clients: at once when one is
-- ready (or none is attached: {}), else once one is (at most ms).
local function when_ready(buf, ms, cb)
  local cs = clients_of(buf, true)
  local function ready_ones()
    local out = {}
    for _, c in ipairs(clients_of(buf, true)) do
      if is_ready(c) then
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
  stop = after(math.max(ms, 0), finish)
end

---------------------------------------------------------------- buffers

local function loaded_buf(path)
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

-- Unloads the oldest hidden buffers Fido loaded beyond max_hidden (never
-- one shown in a window or with changes).
local function trim_hidden()
  local keep = {}
  local extra = #state.hidden - max_hidden
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

-- Whether path is a regular file of at most max_load bytes, from stat
-- alone: opening a FIFO (filereadable() does) waits for a writer, reading
-- a device never ends.
local function loadable(path)
  local st = (vim.uv or vim.loop).fs_stat(path)
  return st ~= nil and st.type == "file" and st.size <= max_load
end

-- The loaded buffer of path, loading the file into a hidden (unlisted,
-- no swap file) buffer when needed, so the user's LSP configuration
-- attaches. Returns buf, fresh; nil when the file is not a regular file,
-- cannot be read or is larger than max_load bytes.
local function load(path)
  local b = loaded_buf(path)
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

-- Gives back a buffer load() loaded when no language server came for it:
-- wiped when load() created it, else unloaded again.
local function release(b)
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

local function filetype_of(buf)
  local ft = vim.bo[buf].filetype
  if ft == "" then
    return "no filetype detected"
  end
  return "filetype " .. ft
end

local function no_server(buf, path)
  return string.format(
    "no language server is attached to %s (%s); configure one for that file type in Neovim (vim.lsp.enable, nvim-lspconfig), or use ripgrep and read_file instead",
    vim.fn.fnamemodify(path, ":t"),
    filetype_of(buf)
  )
end

---------------------------------------------------------------- positions

local function char_len(c)
  if c >= 0xF0 then
    return 4
  elseif c >= 0xE0 then
    return 3
  elseif c >= 0xC0 then
    return 2
  end
  return 1
end

-- The LSP character index (in enc units) of the 0-based byte offset in line.
local function units_of(line, byte, enc)
  if enc == "utf-8" then
    return byte
  end
  local units, i = 0, 1
  while i <= byte and i <= #line do
    local n = char_len(line:byte(i))
    units = units + ((enc == "utf-16" and n == 4) and 2 or 1)
    i = i + n
  end
  return units
end

-- The 0-based byte offset in line of LSP character index ch (enc units).
local function byte_of(line, ch, enc)
  if enc == "utf-8" then
    return math.min(ch, #line)
  end
  local units, i = 0, 1
  while i <= #line and units < ch do
    local n = char_len(line:byte(i))
    units = units + ((enc == "utf-16" and n == 4) and 2 or 1)
    i = i + n
  end
  return i - 1
end

local function shorten(text)
  text = (text or ""):gsub("^%s+", ""):gsub("%s+$", "")
  if #text > max_text then
    text = text:sub(1, max_text) .. "…"
  end
  return text
end

-- Line row (0-based) of a file: from its loaded buffer, else from disk.
local function line_of(path, row)
  local b = loaded_buf(path)
  if b then
    return api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ""
  end
  if not loadable(path) then
    return ""
  end
  local ok, iter = pcall(io.lines, path)
  if not ok then
    return ""
  end
  local i = 0
  for l in iter do
    if i == row then
      return (l:gsub("\r$", ""))
    end
    i = i + 1
    if i > 1000000 then
      break
    end
  end
  return ""
end

local function location(uri, range, enc)
  local ok, path = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  local row = range and range.start and range.start.line or 0
  local line = line_of(path, row)
  local byte = byte_of(line, range and range.start and range.start.character or 0, enc)
  return {
    path = path,
    line = row + 1,
    col = vim.fn.strchars(line:sub(1, byte)) + 1,
    text = shorten(line),
  }
end

-- LSP answers come as Location, Location[] or LocationLink[].
local function locations_of(result, enc, out)
  if type(result) ~= "table" then
    return
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  for _, l in ipairs(result) do
    local loc
    if l.targetUri then
      loc = location(l.targetUri, l.targetSelectionRange or l.targetRange, enc)
    elseif l.uri then
      loc = location(l.uri, l.range, enc)
    end
    if loc then
      table.insert(out, loc)
    end
  end
end

local function hover_text(contents)
  if type(contents) == "string" then
    return contents
  end
  if type(contents) ~= "table" then
    return ""
  end
  if contents.value then
    if contents.language then
      return "```" .. contents.language .. "\n" .. contents.value .. "\n```"
    end
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, hover_text(c))
  end
  return table.concat(parts, "\n\n")
end

local function diagnostics_of(buf, path, ns)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if not ns or ns[d.namespace] then
      local line = api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1] or ""
      table.insert(out, {
        path = path,
        line = d.lnum + 1,
        col = vim.fn.strchars(line:sub(1, d.col or 0)) + 1,
        severity = severities[d.severity] or "error",
        message = d.message or "",
        source = d.source,
      })
    end
  end
  table.sort(out, function(a, b)
    if a.line ~= b.line then
      return a.line < b.line
    end
    return a.col < b.col
  end)
  return out
end

-- Finds the first whole-word occurrence of sym in line (1-based byte), or nil.
local function find_symbol(line, sym)
  local from = 1
  while true do
    local s, e = line:find(sym, from, true)
    if not s then
      return nil
    end
    local before = s > 1 and line:sub(s - 1, s - 1) or ""
    local after_ = line:sub(e + 1, e + 1)
    if not before:match("[%w_]") and not after_:match("[%w_]") then
      return s
    end
    from = s + 1
  end
end

---------------------------------------------------------------- queries

local methods = {
  definition = "textDocument/definition",
  references = "textDocument/references",
  hover = "textDocument/hover",
}

-- Sends method to every client in cs; done(results) gets { {client, result, err} }
-- once all answered or ms passed (then with what arrived and timed_out = true).
local function ask_all(id, cs, method, params_of, buf, ms, done)
  local results, left, finished = {}, #cs, false
  local sent = {}
  local stop
  local function finish(timed_out)
    if finished then
      return
    end
    finished = true
    state.calls[id] = nil
    if stop then
      stop()
    end
    if timed_out then
      for _, s in ipairs(sent) do
        cancel_request(s[1], s[2])
      end
    end
    done(results, timed_out)
  end
  state.calls[id] = {
    cancel = function()
      for _, s in ipairs(sent) do
        cancel_request(s[1], s[2])
      end
      finished = true
      state.calls[id] = nil
      if stop then
        stop()
      end
    end,
  }
  for _, c in ipairs(cs) do
    local ok, rid = request(c, method, params_of(c), function(err, result)
      table.insert(results, { client = c, result = result, err = err })
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
  stop = after(ms, function()
    finish(true)
  end)
end

local function errors_of(results)
  local errs = {}
  for _, r in ipairs(results) do
    if r.err then
      table.insert(errs, r.client.name .. ": " .. tostring(r.err.message or r.err))
    end
  end
  return table.concat(errs, "; ")
end

local function position_query(chan, id, q, opts)
  local method = methods[q.method]
  local buf, fresh = load(q.path)
  if not buf then
    return reply(chan, id, {
      error = "cannot read " .. q.path .. " (missing, unreadable, not a regular file or too large)",
    })
  end
  local line = api.nvim_buf_get_lines(buf, q.line - 1, q.line, false)[1]
  if not line or q.line < 1 then
    return reply(
      chan,
      id,
      { error = string.format("line %d is outside the file (it has %d lines)", q.line, api.nvim_buf_line_count(buf)) }
    )
  end
  local byte -- 0-based
  if q.symbol and q.symbol ~= "" then
    local s = find_symbol(line, q.symbol)
    if not s then
      return reply(chan, id, {
        error = string.format("%q does not occur as a whole word on line %d: %s", q.symbol, q.line, shorten(line)),
      })
    end
    byte = s - 1
  else
    local col = math.max((q.column or 1) - 1, 0)
    byte = vim.fn.byteidx(line, col)
    if byte < 0 then
      byte = #line
    end
  end
  when_ready(buf, opts.request_timeout_ms, function(ready)
    local cs = {}
    for _, c in ipairs(ready) do
      if supports(c, method, buf) then
        table.insert(cs, c)
      end
    end
    if #cs == 0 then
      if #ready > 0 then
        return reply(chan, id, {
          error = string.format(
            "the language server of %s (%s) does not answer %s",
            vim.fn.fnamemodify(q.path, ":t"),
            table.concat(names(ready), ", "),
            method
          ),
        })
      end
      local msg = no_server(buf, q.path)
      if fresh then
        release(buf)
      end
      return reply(chan, id, { error = msg })
    end
    local uri = vim.uri_from_bufnr(buf)
    ask_all(
      id,
      cs,
      method,
      function(c)
        local p = {
          textDocument = { uri = uri },
          position = { line = q.line - 1, character = units_of(line, byte, c.offset_encoding or "utf-16") },
        }
        if q.method == "references" then
          p.context = { includeDeclaration = false }
        end
        return p
      end,
      buf,
      opts.request_timeout_ms,
      function(results, timed_out)
        local out = { server = table.concat(names(cs), ", ") }
        if q.method == "hover" then
          local parts = {}
          for _, r in ipairs(results) do
            if type(r.result) == "table" and r.result.contents then
              local t = hover_text(r.result.contents)
              if t ~= "" then
                table.insert(parts, t)
              end
            end
          end
          out.hover = table.concat(parts, "\n\n")
        else
          local locs, seen = {}, {}
          for _, r in ipairs(results) do
            local list = {}
            locations_of(r.result, r.client.offset_encoding or "utf-16", list)
            for _, l in ipairs(list) do
              local key = l.path .. ":" .. l.line .. ":" .. l.col
              if not seen[key] then
                seen[key] = true
                table.insert(locs, l)
              end
            end
          end
          out.total = #locs
          local limit = q.limit or 0
          if limit > 0 and #locs > limit then
            locs = { unpack(locs, 1, limit) }
          end
          out.locations = locs
        end
        if timed_out and #results == 0 then
          out.error = string.format("%s did not answer within %d ms", out.server, opts.request_timeout_ms)
        elseif
          #results > 0
          and errors_of(results) ~= ""
          and (out.hover or "") == ""
          and #(out.locations or {}) == 0
        then
          out.error = errors_of(results)
        end
        reply(chan, id, out)
      end
    )
  end)
end

local kinds = {
  "File",
  "Module",
  "Namespace",
  "Package",
  "Class",
  "Method",
  "Property",
  "Field",
  "Constructor",
  "Enum",
  "Interface",
  "Function",
  "Variable",
  "Constant",
  "String",
  "Number",
  "Boolean",
  "Array",
  "Object",
  "Key",
  "Null",
  "EnumMember",
  "Struct",
  "Event",
  "Operator",
  "TypeParameter",
}

local function symbols_query(chan, id, q, opts)
  local cs, bufs = {}, {}
  for _, c in ipairs(all_clients()) do
    local buf = next(c.attached_buffers or {})
    if is_ready(c) and supports(c, "workspace/symbol", buf) then
      table.insert(cs, c)
      bufs[c.id] = buf
    end
  end
  if #cs == 0 then
    return reply(chan, id, {
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
      local out, seen = {}, {}
      for _, r in ipairs(results) do
        for _, s in ipairs(type(r.result) == "table" and r.result or {}) do
          local loc = s.location or {}
          local l = loc.uri and location(loc.uri, loc.range, r.client.offset_encoding or "utf-16")
          if l then
            local key = s.name .. l.path .. l.line
            if not seen[key] then
              seen[key] = true
              l.name = s.name
              l.kind = kinds[s.kind] or tostring(s.kind)
              l.container = s.containerName
              table.insert(out, l)
            end
          end
        end
      end
      local total = #out
      local limit = q.limit or 0
      if limit > 0 and #out > limit then
        out = { unpack(out, 1, limit) }
      end
      local res = { server = table.concat(names(cs), ", "), symbols = out, total = total }
      if timed_out and #results == 0 then
        res.error = string.format("%s did not answer within %d ms", res.server, opts.request_timeout_ms)
      elseif total == 0 and errors_of(results) ~= "" then
        res.error = errors_of(results)
      end
      reply(chan, id, res)
    end
  )
end

local function diagnostics_query(chan, id, q, opts)
  if not q.path or q.path == "" then
    local out = {}
    for _, b in ipairs(api.nvim_list_bufs()) do
      local name = api.nvim_buf_get_name(b)
      if api.nvim_buf_is_loaded(b) and name ~= "" and vim.bo[b].buftype == "" then
        for _, d in ipairs(diagnostics_of(b, name)) do
          table.insert(out, d)
        end
      end
    end
    return reply(chan, id, { diagnostics = out, total = #out })
  end
  local buf, fresh = load(q.path)
  if not buf then
    return reply(chan, id, { error = "cannot read " .. q.path })
  end
  when_ready(buf, opts.wait_ms, function(ready)
    local function answer()
      local ds = diagnostics_of(buf, q.path)
      reply(chan, id, { server = table.concat(names(ready), ", "), diagnostics = ds, total = #ds })
    end
    if #ready == 0 then
      if #vim.diagnostic.get(buf) > 0 then
        return answer()
      end
      local msg = no_server(buf, q.path)
      if fresh then
        release(buf)
      end
      return reply(chan, id, { error = msg })
    end
    if fresh or state.pending[buf] then
      diagnostics_after(buf, nil, opts.wait_ms, answer)
    else
      answer()
    end
  end)
end

--- Starts one query; the answer arrives as fido_lsp(id, result). Returns
--- { timeout_ms = n } (how long the host should wait), or { error = msg }.
function M.query(chan, id, q)
  local why = M.unsupported()
  if why then
    return { error = why }
  end
  M.track()
  local opts = options()
  local run
  if methods[q.method] then
    run = position_query
  elseif q.method == "symbols" then
    run = symbols_query
  elseif q.method == "diagnostics" then
    run = diagnostics_query
  else
    return { error = "unknown LSP query " .. tostring(q.method) }
  end
  vim.schedule(function()
    local ok, err = pcall(run, chan, id, q, opts)
    if not ok then
      reply(chan, id, { error = "internal error: " .. tostring(err) })
    end
  end)
  return { timeout_ms = math.max(opts.request_timeout_ms, opts.wait_ms) }
end

--- The host gave up on id (cancelled or timed out).
function M.cancel(id)
  local c = state.calls[id]
  state.calls[id] = nil
  state.watches[id] = nil
  if c then
    pcall(c.cancel)
  end
end

---------------------------------------------------------------- edits

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
    diagnostics_after(f.buf, f.mark, deadline - vim.loop.now(), function(got)
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
      when_ready(f.buf, ms, function(ready)
        f.clients = ready
        one(i, f)
      end)
    end
  end
end

--- Before a tool changes files: records the LSP diagnostics of paths (nil:
--- every loaded buffer with a language server), loading files that are not
--- open into hidden buffers. Answers fido_lsp(id, { files }) once each file's
--- servers are ready and, for a file just loaded, published (at most wait_ms).
--- Returns { disabled = true } when off, else { timeout_ms = n }.
function M.watch(chan, id, paths)
  local opts = options()
  if M.unsupported() or not opts.diagnostics then
    return { disabled = true }
  end
  M.track()
  if paths == vim.NIL then
    paths = nil
  end
  vim.schedule(function()
    local w = { files = {}, new = {} }
    state.watches[id] = w
    if paths == nil then
      for _, b in ipairs(api.nvim_list_bufs()) do
        local name = api.nvim_buf_get_name(b)
        if api.nvim_buf_is_loaded(b) and name ~= "" and vim.bo[b].buftype == "" and #clients_of(b, true) > 0 then
          table.insert(w.files, { buf = b, path = name })
        end
      end
    else
      for _, p in ipairs(paths) do
        local b, fresh = load(p)
        if b then
          table.insert(w.files, { buf = b, path = p, fresh = fresh })
        else
          w.new[p] = true
        end
      end
    end
    gather(w.files, opts.wait_ms, function(f)
      f.waited = f.fresh or state.pending[f.buf] or false
      return f.waited
    end, function(results)
      local files = {}
      local kept = {}
      for _, r in ipairs(results) do
        local f = r.file
        if #f.clients == 0 and f.fresh then
          release(f.buf)
        elseif #f.clients > 0 and api.nvim_buf_is_valid(f.buf) then
          f.tick = api.nvim_buf_get_changedtick(f.buf)
          f.mark = mark(f.buf)
          f.before = diagnostics_of(f.buf, f.path, namespaces())
          table.insert(kept, f)
          table.insert(files, {
            path = f.path,
            servers = names(f.clients),
            diagnostics = f.before,
            fresh = r.got or not f.waited,
          })
        end
      end
      w.files = kept
      if state.watches[id] == w then
        reply(chan, id, { files = files })
      end
    end)
  end)
  return { timeout_ms = opts.wait_ms }
end

--- After the tool ran (and its buffer reloads, scheduled before this):
--- waits for the diagnostics of the new text of each file arg.watch watched
--- that changed (arg.changed: the paths the tool wrote; nil: buffers that
--- were re-read) and of files it created that a server serves, then answers
--- fido_lsp(id, { files }). Returns { timeout_ms = n }.
function M.settle(chan, id, arg)
  local opts = options()
  local w = state.watches[arg.watch]
  state.watches[arg.watch] = nil
  local changed = arg.changed
  if changed == nil or changed == vim.NIL then
    changed = nil
  end
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
        local b, fresh = load(p)
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
          release(f.buf)
        elseif #f.clients > 0 and api.nvim_buf_is_valid(f.buf) then
          table.insert(out, {
            path = f.path,
            servers = names(f.clients),
            diagnostics = diagnostics_of(f.buf, f.path, namespaces()),
            changed = true,
            fresh = r.got,
          })
        end
      end
      reply(chan, id, { files = out })
    end)
  end)
  return { timeout_ms = opts.wait_ms }
end

-- Exposed for tests.
M._units_of = units_of
M._byte_of = byte_of
M._find_symbol = find_symbol

return M
