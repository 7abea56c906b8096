-- Fido's questions (approvals, MCP trust, ask_user, edit reviews, /rewind,
-- the expert float) in one queue that Fido owns, not the picker:
-- * a question never takes the focus while the user is writing: insert or
--   replace mode anywhere, unsent text in Fido's input, the command line, a
--   focused float (another picker), terminal mode, or a key typed in the
--   last QUIET_MS. It waits; the statusline, the transcript (through the
--   host) and one notification say what waits and how to answer it: the
--   answer key (questions.key, "ga") in Fido's input or transcript in normal
--   mode, or :FidoApprove;
-- * when the editor is free it is drawn without the focus first, and takes
--   it only after GUARD_MS without a key (a key meanwhile goes where the
--   user is and starts the guard again; writing puts the question back), so
--   no key typed before or just after it appeared answers it;
-- * Fido's own window (fido.questionwin) shows what is asked in full and
--   scrollable when vim.ui.select is Neovim's inputlist(), and for every
--   question with a detail unless questions.ui = "select"; there the detail
--   float moves beside the picker, and when the picker leaves too little
--   room Fido's window takes over;
-- * one question at a time; the least permissive choice is listed first;
-- * a picker whose windows close without calling back counts as dismissed
--   (the host denies and tells the model), within about GONE_MS; <Esc> in
--   Fido's window or leaving it puts the question back to wait instead;
-- * :FidoCancel / <C-c> close the open question's UI, :FidoApprove (or the
--   answer key) opens the waiting one or reopens the open one.
local M = {}

local api = vim.api
local config = require("fido.config")
local events = require("fido.events")
local expert = require("fido.expert")
local host = require("fido.host")
local questionwin = require("fido.questionwin")
local windows = require("fido.windows")

M.QUIET_MS = 1000 -- no keystroke for this long before a question is drawn
M.GUARD_MS = 500 -- drawn this long without a key before it takes the focus
local TICK_MS = 100 -- how often a waiting or open question is checked
local GONE_MS = 300 -- picker windows gone this long without an answer: dismissed
local WATCH_MS = 2000 -- windows opened this soon after the picker are its own
local FOLLOW_MS = 1000 -- an input asked this soon after an answer opens at once

local state = {
  queue = {}, -- questions waiting to open, oldest first
  current = nil, -- the question drawn or open
  last_key = 0, -- time (ms) of the last keystroke
  timer = nil,
  details = {}, -- call id -> { lines, filetype, title }
  told_fallback = {}, -- picker name -> true once the fallback was announced
}

local function now()
  return vim.loop.hrtime() / 1e6
end

-- Neovim's own vim.notify echoes: a message wider than the command line
-- would raise a hit-enter prompt that takes the user's next key, so it is
-- cut to fit (nvim-notify, noice, snacks show it whole).
local function notify(msg, level)
  local info = debug.getinfo(vim.notify, "S") or {}
  if (info.source or ""):match("vim/_editor%.lua$") then
    local room = math.max(20, vim.v.echospace - 1)
    if vim.fn.strdisplaywidth(msg) > room then
      msg = vim.fn.strcharpart(msg, 0, room - 1) .. "…"
    end
  end
  vim.notify(msg, level or vim.log.levels.INFO, { title = "Fido" })
end

-- Every key the user types (or a test feeds) counts, in every mode.
local key_ns = api.nvim_create_namespace("fido_questions_keys")
vim.on_key(function()
  state.last_key = now()
end, key_ns)

local function fido_visible()
  return windows.transcript_win() ~= nil or windows.input_win() ~= nil
end

-- Unsent text in Fido's input (the buffer is not created here).
local function draft()
  local b = vim.fn.bufnr("fido://input")
  if b <= 0 or not api.nvim_buf_is_loaded(b) then
    return false
  end
  for _, l in ipairs(api.nvim_buf_get_lines(b, 0, -1, false)) do
    if l:match("%S") then
      return true
    end
  end
  return false
end

--- The answer key (questions.key; nil when disabled).
function M.key()
  local k = (config.values.questions or {}).key
  if type(k) == "string" and k ~= "" then
    return k
  end
  return nil
end

-- "ga in Fido's input or transcript (normal mode) or :FidoApprove".
local function how()
  local k = M.key()
  if k then
    return k .. " (normal mode, Fido's windows) or :FidoApprove"
  end
  return ":FidoApprove"
end

--- Which vim.ui.select is in use: { name, builtin, source }.
function M.select_ui()
  local info = debug.getinfo(vim.ui.select, "S") or {}
  local src = info.source or ""
  local known = {
    { "vim/ui%.lua$", "Neovim's default (inputlist())" },
    { "telescope", "telescope-ui-select" },
    { "fzf%-lua", "fzf-lua" },
    { "dressing", "dressing.nvim" },
    { "snacks", "snacks.picker" },
    { "mini[/\\]pick", "mini.pick" },
    { "mini%.pick", "mini.pick" },
  }
  for _, k in ipairs(known) do
    if src:match(k[1]) then
      return { name = k[2], builtin = k[1] == "vim/ui%.lua$", source = info.short_src or src }
    end
  end
  return { name = info.short_src or "an unknown picker", builtin = false, source = info.short_src or src }
end

local function ui_mode()
  return (config.values.questions or {}).ui or "auto"
end

-- Whether question q opens in Fido's own window (else the user's picker).
local function in_fido_window(q)
  if q.kind ~= "select" then
    return false
  end
  local mode = ui_mode()
  if mode == "fido" or q.fallback then
    return true
  end
  local sel = M.select_ui()
  if mode == "select" then
    -- inputlist() shows the detail only when it fits above the list.
    if sel.builtin and q.detail and q.detail ~= "" then
      local list_rows = #q.items + 3
      local need = #vim.split(q.detail, "\n", { plain = true }) + 2
      return need + list_rows >= vim.o.lines - vim.o.cmdheight
    end
    return false
  end
  -- "auto": lists the user asked to pick from (/rewind's messages,
  -- /sessions, /model) go to the picker; what Fido asks goes to its window.
  return sel.builtin or q.question == true
end

-- mini.pick's picker is open (it reads keys in a loop of its own).
local function mini_pick_active()
  local mp = rawget(_G, "MiniPick")
  return type(mp) == "table" and type(mp.is_picker_active) == "function" and mp.is_picker_active()
end

--- Why a question cannot be drawn now (nil: it can). force (:FidoApprove,
--- the answer key: the user asking for it) skips all but what blocks.
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
  if mini_pick_active() then
    return "float"
  end
  if force then
    return nil
  end
  -- Terminal mode: a terminal picker (fzf-lua in a split) or a shell the
  -- user types into; keys there must never reach a question.
  if m == "t" then
    return "terminal"
  end
  if m == "i" or m == "R" then
    return "writing"
  end
  if draft() then
    return "draft"
  end
  local cfg = api.nvim_win_get_config(api.nvim_get_current_win())
  if cfg.relative and cfg.relative ~= "" then
    return "float"
  end
  if now() - state.last_key < M.QUIET_MS then
    return "keys"
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

--- The answer key to show while a question waits and none is open (nil
--- otherwise), for the statuslines.
function M.waiting_hint()
  if #state.queue == 0 or (state.current and state.current.phase == "open") then
    return nil
  end
  return M.key() or ":FidoApprove"
end

--- The open question (nil when none), for tests and :FidoApprove.
function M.current()
  return state.current
end

--- The questions waiting to open.
function M.queued()
  return state.queue
end

-- The detail of a question, remembered for :FidoShow -----------------------

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

-- Announcing a waiting question ----------------------------------------------

local WHY = {
  writing = "you leave insert mode",
  draft = "your message is sent (or the input is empty)",
  float = "you leave the window you are in",
  cmdline = "you leave the command line",
  terminal = "you leave terminal mode",
}

-- Says once, in a notification and the transcript, what waits and how to
-- answer it. Passing waits (a key just typed, a hit-enter prompt) say nothing.
local function announce(q, why)
  if q.announced or not (WHY[why] or why == "later") then
    return
  end
  q.announced = true
  local what = q.approval and "an approval waits" or "a question waits"
  notify(string.format("Fido: %s; %s answers it", what, how()))
  local chan = host.chan()
  if chan then
    local when = why == "later" and "" or (" It opens by itself when " .. WHY[why] .. ".")
    pcall(
      vim.rpcnotify,
      chan,
      "fido_waiting",
      string.format("? %s: %s — %s answers it.%s", what, q.prompt, how(), when)
    )
  end
end

-- Opening, answering, dismissing ---------------------------------------------

local function send(q, value)
  local chan = host.chan()
  if chan then
    pcall(vim.rpcnotify, chan, "fido_answer", q.id, value == nil and vim.NIL or value)
  end
end

-- Closes whatever q has on screen: Fido's window, the picker's windows.
local function close_ui(q)
  if q.win then
    q.win.close()
    q.win = nil
  end
  for w in pairs(q.wins or {}) do
    if api.nvim_win_is_valid(w) then
      pcall(api.nvim_win_close, w, true)
    end
  end
  q.wins = {}
  if q.kind == "expert" then
    pcall(expert.cancel)
  end
  -- A picker's prompt left the editor in insert or terminal mode.
  local m = api.nvim_get_mode().mode:sub(1, 1)
  if q.phase == "open" and (m == "i" or m == "t" or m == "R") then
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
  q.gen = (q.gen or 0) + 1
  close_ui(q)
  q.phase = nil
  if value ~= nil then
    state.answered = now()
  end
  send(q, value)
  redraw()
  if #state.queue > 0 then
    vim.schedule(pump)
  end
end

-- Puts the drawn or open question q back at the head of the queue; deferred:
-- it opens again only when the user asks (the answer key, :FidoApprove).
local function withdraw(q, deferred)
  if state.current ~= q then
    return
  end
  state.current = nil
  q.gen = (q.gen or 0) + 1
  close_ui(q)
  q.phase = nil
  q.deferred = q.deferred or deferred
  q.forced = false
  table.insert(state.queue, 1, q)
  if deferred then
    announce(q, "later")
  end
  start_timer()
  redraw()
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

local function info_of(q)
  local info = {}
  for _, l in ipairs(q.info or {}) do
    table.insert(info, l)
  end
  if q.sandbox and q.sandbox ~= "" then
    table.insert(info, q.sandbox)
  end
  return info
end

-- Draws q in Fido's window without the focus (the guard time starts).
local function draw(q)
  state.current = q
  q.gen = (q.gen or 0) + 1
  q.phase = "guard"
  q.drawn = now()
  q.fido = in_fido_window(q)
  local gen = q.gen
  local items, order = reorder(q.items or {}, q.safe)
  q.shown, q.order = items, order
  local prompt = q.prompt
  if q.kind == "input" or q.kind == "expert" then
    items = {}
    prompt = q.prompt .. "  (your answer is asked in a moment)"
  end
  local function live()
    return state.current == q and q.gen == gen
  end
  local ok, err = pcall(function()
    q.win = questionwin.open({
      prompt = prompt,
      items = items,
      info = info_of(q),
      detail = q.detail,
      filetype = q.filetype,
      name = q.detail and q.detail ~= "" and ("fido://question/" .. (q.call ~= "" and q.call or tostring(q.id))) or nil,
    }, {
      answer = function(i)
        if live() then
          finish(q, order[i])
        end
      end,
      later = function()
        if live() then
          withdraw(q, true)
        end
      end,
      stray = function(keys)
        if live() then
          withdraw(q, false)
          api.nvim_feedkeys(keys, "it", false)
        end
      end,
      cancel = function()
        if live() then
          local chan = host.chan()
          if chan then
            pcall(vim.rpcnotify, chan, "fido_cancel")
          end
          M.cancel_all()
        end
      end,
    })
  end)
  if not ok then
    notify("Fido: the question window failed: " .. tostring(err) .. " (counted as dismissed)", vim.log.levels.ERROR)
    finish(q, nil)
  end
end

local record

-- Hands q to the user's picker (vim.ui.select / vim.ui.input / the expert
-- float); Fido's detail float stays above it.
local function external(q)
  local gen = q.gen
  local function done(value)
    if state.current == q and q.gen == gen then
      finish(q, value)
    end
  end
  q.detail_win = nil
  if q.win then
    if q.kind == "select" then
      q.detail_win = q.win.detail_only()
    else
      q.win.close()
      q.win = nil
    end
  end
  q.before, q.wins, q.gone_since, q.opened = window_set(), {}, nil, now()
  -- inputlist() takes the screen at once: draw the detail first.
  pcall(vim.cmd, "redraw")
  local ok, err = pcall(function()
    if q.kind == "select" then
      vim.ui.select(
        q.shown,
        { prompt = q.prompt, kind = q.approval and "fido.approval" or "fido.question" },
        function(_, idx)
          done(idx and q.order[idx] or nil)
        end
      )
    elseif q.kind == "input" then
      vim.ui.input({ prompt = q.prompt, default = q.default }, function(text)
        done(text)
      end)
    else
      expert.open(q.prompt, function(text)
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

-- The drawn question q takes the focus: Fido's window, or the picker.
local function focus(q)
  q.phase = "open"
  if q.fido then
    q.win.focus()
  else
    external(q)
  end
  redraw()
end

-- Watches the open question's picker: windows that appeared since it opened
-- are its own; once all of them are gone for GONE_MS without an answer, the
-- question is dismissed (fzf-lua's <Esc>, telescope losing focus, a picker
-- replaced by another never call back).
function record(q)
  local own = {}
  for _, w in ipairs(q.win and q.win.wins() or {}) do
    own[w] = true
  end
  for _, w in ipairs(api.nvim_list_wins()) do
    -- Focusable only: a notification float (nvim-notify, noice) that
    -- appears meanwhile is not the picker, and its closing is no answer.
    if not q.before[w] and not own[w] and api.nvim_win_get_config(w).focusable ~= false then
      q.wins[w] = true
    end
  end
end

-- The rows the picker's windows cover, { top, bottom } (0-based, borders
-- included), or nil.
local function picker_rows(q)
  local top, bottom
  for w in pairs(q.wins) do
    if api.nvim_win_is_valid(w) then
      -- The position is the box's corner (a float's border included).
      local pos, cfg = api.nvim_win_get_position(w), api.nvim_win_get_config(w)
      local extra = 0
      if cfg.relative == "" then
        extra = 1 -- a split's statusline
      elseif cfg.border and cfg.border ~= "none" and cfg.border ~= "" then
        extra = 2
      end
      local t, b = pos[1], pos[1] + api.nvim_win_get_height(w) + extra - 1
      top = top and math.min(top, t) or t
      bottom = bottom and math.max(bottom, b) or b
    end
  end
  return top and { math.max(0, top), bottom } or nil
end

-- Moves the detail float beside the picker (above or below its windows).
-- When the whole detail fits in neither, Fido's window asks instead.
local function beside(q)
  local dw = q.detail_win
  if not (dw and api.nvim_win_is_valid(dw)) then
    return
  end
  local rows = picker_rows(q)
  if not rows then
    return
  end
  local key = table.concat(rows, ":")
  if q.placed == key then
    return
  end
  q.placed = key
  local cfg = api.nvim_win_get_config(dw)
  local width = cfg.width
  local need = 0
  for _, l in ipairs(api.nvim_buf_get_lines(api.nvim_win_get_buf(dw), 0, -1, false)) do
    need = need + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  -- One row apart: some pickers' boxes (snacks) are a row taller than
  -- their windows say.
  local screen = vim.o.lines - vim.o.cmdheight
  local above, below = rows[1] - 1, screen - rows[2] - 2
  local row
  if need + 2 <= above then
    row = rows[1] - need - 3
  elseif need + 2 <= below then
    row = rows[2] + 2
  end
  if not row then
    local name = M.select_ui().name
    if not state.told_fallback[name] then
      state.told_fallback[name] = true
      notify(
        "Fido: "
          .. name
          .. " leaves too little room to show what is asked; Fido's own window asks instead "
          .. '(setup({ questions = { ui = "fido" } }) always uses it)'
      )
    end
    -- The picker's late callback (closing its windows may call it) finds
    -- another generation and is dropped.
    state.current = nil
    q.gen = q.gen + 1
    -- mini.pick reads keys in a loop until it is stopped (closing its
    -- window alone leaves it reading for up to a second).
    if mini_pick_active() then
      pcall(_G.MiniPick.stop)
    end
    close_ui(q)
    q.fallback, q.forced, q.phase = true, true, nil
    table.insert(state.queue, 1, q)
    vim.schedule(function()
      pump(true)
    end)
    return
  end
  cfg.row, cfg.height = row, need
  pcall(api.nvim_win_set_config, dw, cfg)
  -- A picker that reads keys in a loop draws nothing of ours by itself.
  pcall(vim.cmd, "redraw")
end

local function watch(q)
  local t = now()
  if t - q.opened <= WATCH_MS then
    record(q)
  end
  if next(q.wins) == nil then
    return
  end
  beside(q)
  if state.current ~= q then
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

-- While q is drawn without the focus: writing puts it back, a key restarts
-- the guard, and GUARD_MS without one (and no typeahead) gives it the focus.
local function guard(q)
  local why = M.busy(false)
  if why and why ~= "keys" and why ~= "blocked" and why ~= "prompt" then
    withdraw(q, false)
    announce(q, why)
    return
  end
  if why then
    return
  end
  local since = math.max(q.drawn, state.last_key)
  if now() - since < M.GUARD_MS then
    return
  end
  if vim.fn.getchar(1) ~= 0 then
    return
  end
  focus(q)
end

-- Draws the oldest waiting question when the editor is free.
function pump(force)
  if state.current or #state.queue == 0 then
    return
  end
  local q = state.queue[1]
  force = force or q.forced
  local why = M.busy(force)
  if not why and q.deferred and not force then
    why = "later"
  end
  if why then
    announce(q, why)
    return
  end
  table.remove(state.queue, 1)
  if api.nvim_get_mode().mode:sub(1, 1) == "i" then
    vim.cmd("stopinsert")
  end
  draw(q)
  if state.current == q and force then
    focus(q)
  end
  redraw()
end

function tick()
  local q = state.current
  if q and q.phase == "guard" then
    guard(q)
  elseif q and q.phase == "open" and not q.fido then
    watch(q)
  end
  if not state.current then
    pump(false)
  end
  if not state.current and #state.queue == 0 then
    stop_timer()
  end
end

--- Queues question q: { id, kind = "select"|"input"|"expert", prompt, items,
--- safe, approval, detail, filetype, info, sandbox, call, default }.
function M.push(q)
  q.kind = q.kind or "select"
  -- The text a choice just asked for (a reason, a rule's prefix) follows
  -- the answer at once: the user is answering, not writing elsewhere.
  if q.kind == "input" and state.answered and now() - state.answered < FOLLOW_MS then
    q.forced = true
  end
  table.insert(state.queue, q)
  if q.detail and q.detail ~= "" then
    M.remember(q.call, vim.split(q.detail, "\n", { plain = true }), q.filetype, table.concat(info_of(q), " · "))
  end
  if not fido_visible() then
    q.announced = true
    notify("Fido: " .. (q.approval and "approval needed: " or "question: ") .. q.prompt .. " (:FidoApprove opens it)")
  end
  events.fire("FidoApprovalNeeded", {
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
    close_ui(q)
    redraw()
  end
end

--- :FidoCancel and <C-c>: every Fido question UI closes, each counts as dismissed.
function M.cancel_all()
  local q = state.current
  if q then
    state.current = nil
    q.gen = (q.gen or 0) + 1
    close_ui(q)
    send(q, nil)
  end
  for _, w in ipairs(state.queue) do
    send(w, nil)
  end
  state.queue = {}
  redraw()
end

--- :FidoApprove and the answer key: opens the waiting question now (a drawn
--- one takes the focus at once), or reopens the open one (its picker may
--- have lost focus or been hidden).
function M.reopen()
  local q = state.current
  if q and q.phase == "guard" then
    focus(q)
    return true
  end
  if q then
    withdraw(q, false)
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

--- The answer key's action in Fido's buffers: the waiting question, else
--- the key's own meaning (ga: the character under the cursor).
function M.answer_key()
  if state.current or #state.queue > 0 then
    M.reopen()
    return
  end
  local k = M.key()
  if k then
    vim.cmd("normal! " .. api.nvim_replace_termcodes(k, true, false, true))
  end
end

return M
