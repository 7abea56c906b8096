-- Fido's questions (approvals, ask_user, the expert float) in one queue that
-- Fido owns, not the picker:
-- * a question opens only when the editor is free: no command-line, no
--   focused float (another picker), no hit-enter prompt, and no keystroke for
--   QUIET_MS (so a word being typed never lands in the picker); until then
--   the statusline says so and one vim.notify tells the user;
-- * one question at a time; the least permissive choice is listed first;
-- * a picker whose windows close without calling back counts as dismissed
--   (the host denies and tells the model), within about GONE_MS;
-- * :FidoCancel / <C-c> close the open question's UI, :FidoApprove reopens it;
-- * approvals show their detail (the whole command, the code) in a float
--   above the picker, kept for :FidoShow {call}.
local M = {}

local api = vim.api

M.QUIET_MS = 600 -- no keystroke for this long before a question opens
local TICK_MS = 100 -- how often a waiting or open question is checked
local GONE_MS = 300 -- picker windows gone this long without an answer: dismissed
local WATCH_MS = 2000 -- windows opened this soon after the picker are its own

local state = {
  queue = {}, -- questions waiting to open, oldest first
  current = nil, -- the question whose UI is open
  last_key = 0, -- time (ms) of the last keystroke
  timer = nil,
  details = {}, -- call id -> { lines, filetype, title }
}

local function now()
  return vim.loop.hrtime() / 1e6
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "Fido" })
end

-- Every key the user types (or a test feeds) counts, in every mode.
local key_ns = api.nvim_create_namespace("fido_questions_keys")
vim.on_key(function()
  state.last_key = now()
end, key_ns)

local function fido_visible()
  local layout = require("fido.layout")
  return layout.transcript_win() ~= nil or layout.input_win() ~= nil
end

--- Why a question cannot open now (nil: it can). force (:FidoApprove, the
--- user asking for it) skips the typing pause and the focused-float check.
function M.busy(force)
  local mode = api.nvim_get_mode()
  if mode.blocking then
    return "blocked"
  end
  local m = mode.mode:sub(1, 1)
  if m == "c" then
    return "cmdline"
  end
  if m == "r" then
    return "prompt"
  end
  -- Terminal mode: a terminal picker (fzf-lua in a split) or a shell the
  -- user types into; keys there must never reach a picker.
  if m == "t" and not force then
    return "terminal"
  end
  local cfg = api.nvim_win_get_config(api.nvim_get_current_win())
  if not force and cfg.relative and cfg.relative ~= "" then
    return "float"
  end
  if not force and now() - state.last_key < M.QUIET_MS then
    return m == "i" and "typing" or "keys"
  end
  return nil
end

local function stop_timer()
  if state.timer then
    state.timer:stop()
    state.timer:close()
    state.timer = nil
  end
end

local tick

local function start_timer()
  if state.timer then
    return
  end
  state.timer = vim.loop.new_timer()
  state.timer:start(
    TICK_MS,
    TICK_MS,
    vim.schedule_wrap(function()
      tick()
    end)
  )
end

local function redraw()
  pcall(vim.cmd, "redrawstatus!")
end

--- Whether a question waits or is open; "approval" when one of them is an
--- approval (the statusline shows "waiting for approval").
function M.pending()
  local any = nil
  local function see(q)
    if q.approval then
      any = "approval"
    elseif not any then
      any = "question"
    end
  end
  if state.current then
    see(state.current)
  end
  for _, q in ipairs(state.queue) do
    see(q)
  end
  return any
end

--- The open question (nil when none), for tests and :FidoApprove.
function M.current()
  return state.current
end

--- The questions waiting to open.
function M.queued()
  return state.queue
end

-- The detail float above the picker -----------------------------------------

local function detail_lines(q)
  local lines = {}
  for _, l in ipairs(q.info or {}) do
    table.insert(lines, l)
  end
  return lines, vim.split(q.detail or "", "\n", { plain = true })
end

--- Opens the scratch buffer of a question's detail (call id), or nil.
local function detail_buf(name, lines, filetype)
  local existing = vim.fn.bufnr(name)
  local b = existing > 0 and existing or api.nvim_create_buf(false, true)
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "hide"
  vim.bo[b].swapfile = false
  vim.bo[b].undolevels = -1
  if existing <= 0 then
    pcall(api.nvim_buf_set_name, b, name)
  end
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  if filetype and filetype ~= "" then
    vim.bo[b].filetype = filetype
  end
  return b
end

local function close_preview(q)
  if q.preview and api.nvim_win_is_valid(q.preview) then
    pcall(api.nvim_win_close, q.preview, true)
  end
  q.preview = nil
end

-- The whole text, syntax-highlighted, at the top of the editor; not
-- focusable and below pickers (zindex 45 < their usual 50) so it never takes
-- a key or hides the choices.
local function show_preview(q)
  if not q.detail or q.detail == "" then
    return
  end
  local info, body = detail_lines(q)
  local name = "fido://question/" .. (q.call ~= "" and q.call or tostring(q.id))
  local b = detail_buf(name, body, q.filetype)
  local title = table.concat(info, " · ")
  local width = math.max(20, vim.fn.strdisplaywidth(title) + 4)
  for _, l in ipairs(body) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 1)
  end
  width = math.min(width, math.max(20, vim.o.columns - 4))
  local height = math.max(1, math.min(#body, math.floor(vim.o.lines * 0.45)))
  local cfg = {
    relative = "editor",
    row = 1,
    col = math.max(0, math.floor((vim.o.columns - width) / 2) - 1),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    focusable = false,
    zindex = 45,
  }
  if title ~= "" and vim.fn.has("nvim-0.9") == 1 and vim.fn.strdisplaywidth(title) + 2 <= width then
    cfg.title = " " .. title .. " "
  elseif title ~= "" then
    -- No float titles before 0.9 (or one too wide): the first line says it.
    vim.bo[b].modifiable = true
    api.nvim_buf_set_lines(b, 0, 0, false, { "# " .. title })
    vim.bo[b].modifiable = false
    cfg.height = math.min(cfg.height + 1, #body + 1)
  end
  local ok, w = pcall(api.nvim_open_win, b, false, cfg)
  if ok then
    q.preview = w
    pcall(function()
      vim.wo[w].wrap = true
    end)
  end
end

--- Remembers the full text of a tool call for :FidoShow.
function M.remember(call, lines, filetype, title)
  if call and call ~= "" then
    state.details[call] = { lines = lines, filetype = filetype, title = title }
  end
end

--- The call ids :FidoShow knows, for completion.
function M.calls()
  local out = vim.tbl_keys(state.details)
  table.sort(out)
  return out
end

--- :FidoShow {call}: the call's full text in a scratch buffer (a split).
function M.show(call)
  local d = state.details[call or ""]
  if not d then
    notify(
      "Fido: no full text for call " .. tostring(call) .. " (known: " .. table.concat(M.calls(), ", ") .. ")",
      vim.log.levels.WARN
    )
    return false
  end
  local lines = {}
  if d.title and d.title ~= "" then
    table.insert(lines, "# " .. d.title)
  end
  vim.list_extend(lines, d.lines)
  local b = detail_buf("fido://show/" .. call, lines, d.filetype)
  vim.cmd("botright split")
  api.nvim_win_set_buf(0, b)
  return true
end

-- Opening, answering, dismissing ---------------------------------------------

local function send(q, value)
  local chan = require("fido.host").chan()
  if chan then
    pcall(vim.rpcnotify, chan, "fido_answer", q.id, value == nil and vim.NIL or value)
  end
end

local function close_windows(q)
  for w in pairs(q.wins or {}) do
    if api.nvim_win_is_valid(w) then
      pcall(api.nvim_win_close, w, true)
    end
  end
  if q.kind == "expert" then
    pcall(function()
      require("fido.expert").cancel()
    end)
  end
  -- A picker's prompt left the editor in insert or terminal mode.
  local m = api.nvim_get_mode().mode:sub(1, 1)
  if m == "i" or m == "t" or m == "R" then
    vim.cmd("stopinsert")
  end
end

local pump

-- Ends the open question q with value (nil: dismissed) and sends it.
local function finish(q, value)
  if state.current ~= q then
    return
  end
  state.current = nil
  close_preview(q)
  send(q, value)
  redraw()
  if #state.queue > 0 then
    vim.schedule(pump)
  end
end

-- Moves the least permissive item first; order maps shown -> original index.
local function reorder(items, safe)
  local shown, order = {}, {}
  if safe and safe >= 1 and safe <= #items then
    table.insert(shown, items[safe])
    table.insert(order, safe)
  end
  for i, it in ipairs(items) do
    if i ~= safe then
      table.insert(shown, it)
      table.insert(order, i)
    end
  end
  return shown, order
end

local function window_set()
  local set = {}
  for _, w in ipairs(api.nvim_list_wins()) do
    set[w] = true
  end
  return set
end

local record

local function open(q)
  state.current = q
  q.gen = (q.gen or 0) + 1
  local gen = q.gen
  q.before, q.wins, q.gone_since, q.opened = window_set(), {}, nil, now()
  show_preview(q)
  if q.preview then
    q.before[q.preview] = true
  end
  local function done(value)
    if state.current == q and q.gen == gen then
      finish(q, value)
    end
  end
  local ok, err = pcall(function()
    if q.kind == "select" then
      local items, order = reorder(q.items, q.safe)
      vim.ui.select(
        items,
        { prompt = q.prompt, kind = q.approval and "fido.approval" or "fido.question" },
        function(_, idx)
          done(idx and order[idx] or nil)
        end
      )
    elseif q.kind == "input" then
      vim.ui.input({ prompt = q.prompt, default = q.default }, function(text)
        done(text)
      end)
    else
      require("fido.expert").open(q.prompt, function(text)
        done(text)
      end)
    end
  end)
  if state.current == q and q.gen == gen then
    record(q) -- a picker that opened at once (most do)
  end
  if not ok then
    notify("Fido: the picker failed: " .. tostring(err) .. " (counted as dismissed)", vim.log.levels.ERROR)
    done(nil)
  end
end

-- Watches the open question's picker: windows that appeared since it opened
-- are its own; once all of them are gone for GONE_MS without an answer, the
-- question is dismissed (fzf-lua's <Esc>, telescope losing focus, a picker
-- replaced by another never call back).
function record(q)
  for _, w in ipairs(api.nvim_list_wins()) do
    -- Focusable only: a notification float (nvim-notify, noice) that
    -- appears meanwhile is not the picker, and its closing is no answer.
    if not q.before[w] and w ~= q.preview and api.nvim_win_get_config(w).focusable ~= false then
      q.wins[w] = true
    end
  end
end

local function watch(q)
  local t = now()
  if t - q.opened <= WATCH_MS then
    record(q)
  end
  if next(q.wins) == nil then
    return
  end
  for w in pairs(q.wins) do
    if api.nvim_win_is_valid(w) then
      q.gone_since = nil
      return
    end
  end
  q.gone_since = q.gone_since or t
  if t - q.gone_since >= GONE_MS then
    finish(q, nil)
  end
end

-- Opens the oldest waiting question when the editor is free.
function pump(force)
  if state.current or #state.queue == 0 then
    return
  end
  local why = M.busy(force or state.queue[1].forced)
  if why then
    local q = state.queue[1]
    local where = ({
      typing = "pause typing",
      float = "close the window you are in",
      cmdline = "leave the command line",
      terminal = "leave terminal mode",
    })[why]
    if not q.announced and where then
      q.announced = true
      notify(
        string.format(
          "Fido: %s is waiting; it opens when you %s (:FidoApprove opens it now)",
          q.approval and "an approval" or "a question",
          where
        )
      )
    end
    return
  end
  local q = table.remove(state.queue, 1)
  -- Keys typed before the picker appeared must not answer it.
  pcall(function()
    while vim.fn.getchar(0) ~= 0 do
    end
  end)
  if api.nvim_get_mode().mode:sub(1, 1) == "i" then
    -- Pickers that start their own insert mode misbehave when opened from
    -- insert mode: leave it first, open on the next tick.
    vim.cmd("stopinsert")
    table.insert(state.queue, 1, q)
    return
  end
  open(q)
  redraw()
end

function tick()
  if state.current then
    watch(state.current)
  end
  if not state.current then
    pump(false)
  end
  if not state.current and #state.queue == 0 then
    stop_timer()
  end
end

--- Queues question q: { id, kind = "select"|"input"|"expert", prompt, items,
--- safe, approval, detail, filetype, info, call, default }.
function M.push(q)
  q.kind = q.kind or "select"
  table.insert(state.queue, q)
  if q.detail and q.detail ~= "" then
    M.remember(q.call, vim.split(q.detail, "\n", { plain = true }), q.filetype, table.concat(q.info or {}, " · "))
  end
  if not fido_visible() then
    q.announced = true
    notify("Fido: " .. (q.approval and "approval needed: " or "question: ") .. q.prompt .. " (:FidoApprove opens it)")
  end
  require("fido.events").fire("FidoApprovalNeeded", {
    id = q.id,
    kind = q.kind,
    approval = q.approval == true,
    prompt = q.prompt,
    items = q.items,
    call = q.call,
    detail = q.detail,
  })
  redraw()
  start_timer()
  vim.schedule(function()
    pump(false)
  end)
end

--- The host stopped waiting for question id (cancelled): its UI closes and
--- a late answer is dropped.
function M.dismiss(id)
  for i, q in ipairs(state.queue) do
    if q.id == id then
      table.remove(state.queue, i)
      redraw()
      return
    end
  end
  local q = state.current
  if q and q.id == id then
    state.current = nil
    q.gen = (q.gen or 0) + 1
    close_preview(q)
    close_windows(q)
    redraw()
  end
end

--- :FidoCancel and <C-c>: every Fido question UI closes, each counts as dismissed.
function M.cancel_all()
  local q = state.current
  if q then
    state.current = nil
    q.gen = (q.gen or 0) + 1
    close_preview(q)
    close_windows(q)
    send(q, nil)
  end
  for _, w in ipairs(state.queue) do
    send(w, nil)
  end
  state.queue = {}
  redraw()
end

--- :FidoApprove: opens the waiting question now, or reopens the open one
--- (its picker may have lost focus or been hidden).
function M.reopen()
  local q = state.current
  if q then
    state.current = nil
    q.gen = (q.gen or 0) + 1
    close_preview(q)
    close_windows(q)
    table.insert(state.queue, 1, q)
  end
  if #state.queue == 0 then
    notify("Fido: no question is waiting")
    return false
  end
  state.queue[1].forced = true
  start_timer()
  -- After the command line closes.
  vim.schedule(function()
    pump(true)
  end)
  return true
end

return M
