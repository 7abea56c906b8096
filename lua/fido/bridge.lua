-- What the Go host calls: apply() receives one coalesced batch per flush
-- (transcript ops, status, plan, activity, draft); select/input run
-- vim.ui pickers scheduled and answer with a fido_answer notification.
local M = {}

local api = vim.api
local activity = require("fido.activity")
local events = require("fido.events")
local highlights = require("fido.highlights")
local layout = require("fido.layout")
local planwin = require("fido.planwin")
local questions = require("fido.questions")
local status = require("fido.status")

local ns = api.nvim_create_namespace("fido_transcript")
M.ns = ns

local state = {}

local function nilify(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

-- Every group, transcript ones included, lives in fido.highlights (which
-- also re-applies them on ColorScheme). fido.questions, loaded with the
-- first batch (the host's start), counts keystrokes before any question
-- arrives (see its quiet second).
highlights.setup()

local function mark(buf, row, len, group)
  if group and group ~= "" and len > 0 then
    api.nvim_buf_set_extmark(buf, ns, row, 0, { end_row = row, end_col = len, hl_group = group })
  end
end

-- Applies transcript ops (see nvim/transcript.go TranscriptOps). They
-- change what the last apply left; when the buffer holds something else
-- (wiped, unloaded, edited) nothing is applied and the result asks the host
-- to send every line again.
local function apply_transcript(ops)
  local buf = layout.transcript_buf()
  local have = nilify(ops.have) or 0
  if
    have > 0
    and (buf ~= state.tbuf or api.nvim_buf_get_changedtick(buf) ~= state.ttick or api.nvim_buf_line_count(buf) ~= have)
  then
    return true
  end
  local wins = vim.fn.win_findbuf(buf)
  local count = api.nvim_buf_line_count(buf)
  local follow = {}
  for _, w in ipairs(wins) do
    if api.nvim_win_get_cursor(w)[1] >= count then
      table.insert(follow, w)
    end
  end
  vim.bo[buf].modifiable = true
  local trim = nilify(ops.trim) or 0
  if trim > 0 then
    api.nvim_buf_clear_namespace(buf, ns, 0, trim)
    api.nvim_buf_set_lines(buf, 0, trim, false, {})
  end
  for _, s in ipairs(nilify(ops.set) or {}) do
    api.nvim_buf_clear_namespace(buf, ns, s.row, s.row + 1)
    api.nvim_buf_set_lines(buf, s.row, s.row + 1, false, { s.text })
    mark(buf, s.row, #s.text, s.group)
  end
  -- The streamed last row grew: add the new text only (the row may be 100 KB).
  local a = nilify(ops.append)
  if a then
    local len = a.col + #a.text
    api.nvim_buf_set_text(buf, a.row, a.col, a.row, a.col, { a.text })
    api.nvim_buf_clear_namespace(buf, ns, a.row, a.row + 1)
    mark(buf, a.row, len, a.group)
  end
  local from = nilify(ops.from) or -1
  if from >= 0 then
    local lines = nilify(ops.lines) or {}
    local groups = nilify(ops.groups) or {}
    api.nvim_buf_clear_namespace(buf, ns, from, -1)
    api.nvim_buf_set_lines(buf, from, -1, false, lines)
    for i, text in ipairs(lines) do
      mark(buf, from + i - 1, #text, groups[i])
    end
  end
  vim.bo[buf].modifiable = false
  -- At the end of the last line: a line taller than the window then shows
  -- its newest text, not its start.
  local last = api.nvim_buf_line_count(buf)
  for _, w in ipairs(follow) do
    if api.nvim_win_is_valid(w) then
      api.nvim_win_set_cursor(w, { last, layout.END_COL })
    end
  end
  state.tbuf, state.ttick = buf, api.nvim_buf_get_changedtick(buf)
  return false
end

-- Puts a surface's payload on screen; a failure is said, not raised (the
-- rest of the batch still applies).
local function apply_to(name, apply, payload)
  local ok, err = pcall(apply, payload)
  if not ok then
    vim.notify("Fido: " .. name .. ": " .. tostring(err), vim.log.levels.ERROR, { title = "Fido" })
  end
end

-- Fires one User event the host sent (see nvim/ui.go Event), scheduled so
-- that a user's autocmd never runs inside the host's call; events keep their
-- order, and come after what the batch applied. FidoTurnDone also says so
-- when none of Fido's windows is visible (the user would not see it end).
local function fire(name, data)
  data = nilify(data) or {}
  if name == "FidoPlanUpdated" then
    data = { plan = nilify(data.plan) }
  end
  vim.schedule(function()
    events.fire(name, data)
    if name == "FidoTurnDone" and layout.transcript_win() == nil and layout.input_win() == nil then
      vim.notify("Fido: the turn is done (:Fido shows it)", vim.log.levels.INFO, { title = "Fido" })
    end
  end)
end

--- Applies one batch from the host; true asks it to resend the whole
--- transcript (see apply_transcript).
function M.apply(batch)
  local resync = false
  if batch.transcript and batch.transcript ~= vim.NIL then
    resync = apply_transcript(batch.transcript)
  end
  if batch.plan_state and batch.plan_state ~= vim.NIL then
    state.plan = nilify(batch.plan_state.plan)
    status.get().plan = state.plan
  end
  if batch.status and batch.status ~= vim.NIL then
    local st = batch.status
    st.plan = state.plan
    st.subagent = nilify(st.subagent)
    status.set(st)
  end
  if type(batch.flushes) == "number" then
    status.get().flushes = batch.flushes
  end
  if batch.plan ~= nil and batch.plan ~= vim.NIL then
    apply_to("fido.planwin", planwin.apply, batch.plan)
  end
  if batch.activity ~= nil and batch.activity ~= vim.NIL then
    apply_to("fido.activity", activity.apply, batch.activity)
  end
  if batch.quit == true then
    layout.close()
  end
  if type(batch.draft) == "string" then
    layout.set_input(batch.draft, false)
  end
  for _, ev in ipairs(nilify(batch.events) or {}) do
    fire(ev.name, ev.data)
  end
  return resync
end

-- Every question goes through fido.questions' queue (see there): it opens
-- only when the editor is free, one at a time, and Fido (not the picker)
-- tracks whether it was answered.

--- Shows vim.ui.select; answers the 1-based index (nil when dismissed).
function M.select(id, prompt, items)
  vim.schedule(function()
    questions.push({ id = id, kind = "select", prompt = prompt, items = items })
  end)
end

--- An approval or choice with its detail shown in full beside the picker
--- (nvim/prompts.go questionView); answers the 1-based index of q.items.
function M.question(id, q)
  local push = {
    id = id,
    kind = "select",
    prompt = q.prompt,
    items = q.items,
    safe = nilify(q.safe),
    approval = q.approval == true,
    detail = nilify(q.detail),
    filetype = nilify(q.filetype),
    info = nilify(q.info),
    sandbox = nilify(q.sandbox),
    question = true, -- not a list to pick from: Fido's own window asks it (questions.ui = "auto")
    call = nilify(q.call) or "",
  }
  vim.schedule(function()
    questions.push(push)
  end)
end

--- Shows vim.ui.input; answers the text (nil when dismissed).
function M.input(id, prompt, default)
  vim.schedule(function()
    questions.push({ id = id, kind = "input", prompt = prompt, default = default })
  end)
end

--- Shows the ask_an_expert float; answers the pasted text (nil when cancelled).
function M.expert(id, question)
  vim.schedule(function()
    questions.push({ id = id, kind = "expert", prompt = question })
  end)
end

--- The host gave up waiting (cancelled): the question's UI closes and a late
--- answer is dropped.
function M.dismiss(id)
  vim.schedule(function()
    questions.dismiss(id)
  end)
end

--- vim.notify from the host (level: 0 info, 1 warn, 2 error).
function M.notify(msg, level)
  local levels = { [0] = vim.log.levels.INFO, [1] = vim.log.levels.WARN, [2] = vim.log.levels.ERROR }
  vim.schedule(function()
    vim.notify(msg, levels[level] or vim.log.levels.INFO, { title = "Fido" })
  end)
end

local function loaded_buf(path)
  local want = vim.fn.resolve(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and vim.fn.resolve(name) == want then
        return buf
      end
    end
  end
  return nil
end

--- Whether a loaded buffer for path has unsaved changes.
function M.modified(path)
  local b = loaded_buf(path)
  return b ~= nil and vim.bo[b].modified
end

-- Re-reads an unmodified buffer from disk. Not :checktime: Neovim compares
-- whole-second mtimes there, so a change made within a second of the user's
-- :write would go unseen and the stale buffer could later overwrite it.
-- :edit! keeps the undo history ('undoreload'); cursors are put back.
local function reload_clean(b)
  local cursors = {}
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == b then
      cursors[w] = api.nvim_win_get_cursor(w)
    end
  end
  api.nvim_buf_call(b, function()
    pcall(vim.cmd, "silent keepalt keepjumps edit!")
  end)
  local last = api.nvim_buf_line_count(b)
  for w, pos in pairs(cursors) do
    if api.nvim_win_is_valid(w) and api.nvim_win_get_buf(w) == b then
      pcall(api.nvim_win_set_cursor, w, { math.min(pos[1], last), pos[2] })
    end
  end
end

-- The size the buffer would have on disk (fileformat, 'eol' and BOM included).
local function disk_size(b)
  return api.nvim_buf_call(b, function()
    local n = vim.fn.line2byte(vim.fn.line("$") + 1) - 1
    if n < 0 then
      n = 0
    end
    if vim.bo.fileformat == "dos" then
      n = n + vim.fn.line("$")
    end
    if not vim.bo.eol or (vim.bo.binary and not vim.bo.fixeol) then
      n = n - 1
    end
    if vim.bo.bomb then
      n = n + 3
    end
    return n
  end)
end

-- Brings one file buffer up to date with the disk. Fido never writes a
-- modified buffer's file, and a removed file has nothing to read: those get
-- Neovim's own :checktime (it warns and asks). An unmodified buffer is re-read
-- at once when the file is known to have changed or its size differs (a
-- :checktime would miss a change within the second of the last read), else
-- checked with :checktime without the W11 prompt.
local function recheck(b, name, changed)
  if vim.bo[b].modified or vim.fn.filereadable(name) == 0 then
    pcall(vim.cmd, "checktime " .. b)
  elseif changed or vim.fn.getfsize(name) ~= disk_size(b) then
    reload_clean(b)
  else
    api.nvim_buf_call(b, function()
      vim.cmd("setlocal autoread")
      pcall(vim.cmd, "checktime " .. b)
      vim.cmd("set autoread<")
    end)
  end
end

--- After a shell command, which may have changed any file: re-check every
--- loaded file buffer (scheduled).
function M.refresh_all()
  vim.schedule(function()
    for _, b in ipairs(api.nvim_list_bufs()) do
      local name = api.nvim_buf_get_name(b)
      if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and name ~= "" then
        recheck(b, name, false)
      end
    end
  end)
end

--- Reloads the loaded buffers of paths, which a tool changed (scheduled).
function M.reload(paths)
  vim.schedule(function()
    for _, p in ipairs(paths) do
      local b = loaded_buf(p)
      if b then
        recheck(b, p, true)
      end
    end
  end)
end

return M
