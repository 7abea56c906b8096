-- What the editor knows, as mentions: @buffer, @diagnostics[:all], @quickfix
-- and @selection are expanded when a message is submitted into labelled
-- blocks attached to it (bounded, with a note when cut).
local M = {}

local mentions = require("fido.mentions")

--- The editor mentions this module expands.
M.names = mentions.EDITOR

local MAX_BYTES = 64 * 1024 -- per block
local MAX_ITEMS = 200 -- diagnostics or quickfix entries per block

-- The newest buffer the user worked in outside Fido's own windows: what
-- @buffer and @selection mean when the message is typed in fido://input.
local last_buf

local function is_user_buf(buf)
  return vim.api.nvim_buf_is_valid(buf)
    and vim.bo[buf].buftype == ""
    and not vim.api.nvim_buf_get_name(buf):match("^fido://")
end

--- Starts following the user's buffers (called once when the plugin loads).
function M.track()
  local group = vim.api.nvim_create_augroup("FidoContextMentions", { clear = true })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(ev)
      if is_user_buf(ev.buf) then
        last_buf = ev.buf
      end
    end,
  })
end

local function target_buf()
  local cur = vim.api.nvim_get_current_buf()
  if is_user_buf(cur) then
    return cur
  end
  if last_buf and is_user_buf(last_buf) then
    return last_buf
  end
  return nil
end

local function label(buf)
  return mentions.relpath(buf) or ("[No Name] buffer " .. buf)
end

local function bounded(lines, what)
  local out, size = {}, 0
  for i, l in ipairs(lines) do
    size = size + #l + 1
    if size > MAX_BYTES then
      table.insert(out, string.format("[%s cut: %d more lines not shown]", what, #lines - i + 1))
      break
    end
    table.insert(out, l)
  end
  return out
end

local severities = { "ERROR", "WARN", "INFO", "HINT" }

local function diagnostics_of(buf, out)
  local path = label(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if #out >= MAX_ITEMS then
      table.insert(out, string.format("[more diagnostics not shown: at most %d]", MAX_ITEMS))
      return false
    end
    local msg = (d.message or ""):gsub("\n", " ")
    local src = d.source and (" (" .. d.source .. ")") or ""
    table.insert(
      out,
      string.format("%s:%d:%d: %s: %s%s", path, d.lnum + 1, d.col + 1, severities[d.severity] or "?", msg, src)
    )
  end
  return true
end

local expanders = {}

expanders["@buffer"] = function()
  local buf = target_buf()
  if not buf then
    return "[@buffer: no file buffer is current]"
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local state = vim.bo[buf].modified and ", with unsaved changes: the file on disk differs" or ""
  return string.format(
    "[@buffer: %s, %d lines as in Neovim%s]\n```\n%s\n```",
    label(buf),
    #lines,
    state,
    table.concat(bounded(lines, "buffer"), "\n")
  )
end

expanders["@diagnostics"] = function()
  local buf = target_buf()
  if not buf then
    return "[@diagnostics: no file buffer is current]"
  end
  local out = {}
  diagnostics_of(buf, out)
  if #out == 0 then
    return string.format("[@diagnostics: %s has no diagnostics]", label(buf))
  end
  return string.format("[@diagnostics of %s]\n%s", label(buf), table.concat(out, "\n"))
end

expanders["@diagnostics:all"] = function()
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and is_user_buf(buf) then
      if not diagnostics_of(buf, out) then
        break
      end
    end
  end
  if #out == 0 then
    return "[@diagnostics:all: no loaded buffer has diagnostics]"
  end
  return "[@diagnostics:all: every loaded buffer]\n" .. table.concat(out, "\n")
end

expanders["@quickfix"] = function()
  local items = vim.fn.getqflist()
  if #items == 0 then
    return "[@quickfix: the quickfix list is empty]"
  end
  local out = {}
  for i, it in ipairs(items) do
    if i > MAX_ITEMS then
      table.insert(out, string.format("[%d more entries not shown]", #items - MAX_ITEMS))
      break
    end
    local path = it.bufnr > 0 and label(it.bufnr) or ""
    table.insert(out, string.format("%s:%d: %s", path, it.lnum, (it.text or ""):gsub("\n", " ")))
  end
  local title = vim.fn.getqflist({ title = 0 }).title or ""
  return string.format("[@quickfix%s]\n%s", title ~= "" and (": " .. title) or "", table.concat(out, "\n"))
end

expanders["@selection"] = function()
  local buf = target_buf()
  if not buf then
    return "[@selection: no file buffer is current]"
  end
  local s, e = vim.api.nvim_buf_get_mark(buf, "<"), vim.api.nvim_buf_get_mark(buf, ">")
  if s[1] == 0 or e[1] == 0 then
    return "[@selection: " .. label(buf) .. " has no visual selection yet]"
  end
  local lines = vim.api.nvim_buf_get_lines(buf, s[1] - 1, e[1], false)
  return string.format(
    "[@selection: %s:%d-%d as in Neovim]\n```\n%s\n```",
    label(buf),
    s[1],
    e[1],
    table.concat(bounded(lines, "selection"), "\n")
  )
end

--- Expands the editor mentions in text: each one named is attached once,
--- as a labelled block after the message.
function M.expand(text)
  local blocks = {}
  -- Longest names first, so @diagnostics:all is not read as @diagnostics.
  for _, name in ipairs({ "@diagnostics:all", "@diagnostics", "@buffer", "@quickfix", "@selection" }) do
    -- A whole word: "@diagnostics" does not match "@diagnostics:all" nor
    -- "@buffers", but does match "@buffer," at the end of a clause.
    local pat = "%f[%S]" .. name:gsub("%p", "%%%0") .. "%f[^%w_:%-]"
    if text:find(pat) then
      table.insert(blocks, expanders[name]())
    end
  end
  if #blocks == 0 then
    return text
  end
  return text .. "\n\n" .. table.concat(blocks, "\n\n")
end

return M
