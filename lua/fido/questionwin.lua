-- Fido's own question window: what is asked (the whole command, diff or
-- server command) in a float at the top of the editor, scrollable and never
-- covered, and the choices in a float right below it. Used for every
-- question when vim.ui.select is Neovim's inputlist(), and for questions
-- with a detail when the picker cannot show it (see fido.questions).
--
-- It can be drawn without the focus (the guard time: keys still go where
-- the user is) and focused later. In the choices window only j/k (and the
-- arrows) move, <CR> answers, <Esc> puts the question back to wait; any
-- other printable key (digits included) answers nothing: the question steps
-- aside and the keys go back to where the user was typing.
local M = {}

local api = vim.api

local ns = api.nvim_create_namespace("fido_questionwin")

local REFOCUS_MS = 500 -- focus taken from the window this soon after it got it is taken back

local HINT = "<CR> answer · j/k choose · <C-d>/<C-u> scroll · <Tab> read · <Esc> later"
local HINT_PLAIN = "<CR> answer · j/k choose · <Esc> later"

local function termcodes(s)
  return api.nvim_replace_termcodes(s, true, false, true)
end

-- Screen rows lines take in a window width columns wide with 'wrap'.
local function rows_of(lines, width)
  local n = 0
  for _, l in ipairs(lines) do
    n = n + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  return n
end

local function scratch(name)
  local b
  if name then
    local existing = vim.fn.bufnr(name)
    if existing > 0 then
      b = existing
    end
  end
  b = b or api.nvim_create_buf(false, true)
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "hide"
  vim.bo[b].swapfile = false
  vim.bo[b].undolevels = -1
  if name and api.nvim_buf_get_name(b) == "" then
    pcall(api.nvim_buf_set_name, b, name)
  end
  return b
end

local function set_lines(b, lines)
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
end

local function wo(w, opts)
  for k, v in pairs(opts) do
    pcall(function()
      vim.wo[w][k] = v
    end)
  end
end

--- The geometry of a question window for a screen of columns x rows (the
--- rows above the command line): detail float on top, choices below.
--- head: the choice window's lines above the items; nitems; detail: lines.
--- Returns { width, detail = { row, height } or nil, choices = { row, height } }.
function M.layout(columns, rows, head, items, detail)
  local want = 40
  for _, l in ipairs(head) do
    want = math.max(want, vim.fn.strdisplaywidth(l) + 2)
  end
  for _, l in ipairs(items) do
    want = math.max(want, vim.fn.strdisplaywidth(l) + 4)
  end
  for _, l in ipairs(detail or {}) do
    want = math.max(want, vim.fn.strdisplaywidth(l) + 1)
  end
  want = math.max(want, vim.fn.strdisplaywidth(HINT) + 2)
  local width = math.max(20, math.min(want, columns - 4))
  local item_rows = 0
  for _, l in ipairs(items) do
    item_rows = item_rows + math.max(1, math.ceil((vim.fn.strdisplaywidth(l) + 2) / width))
  end
  local choices_h = rows_of(head, width) + item_rows + 1
  choices_h = math.max(1, math.min(choices_h, rows - 2))
  local out = { width = width, choices = { height = choices_h } }
  if detail and #detail > 0 then
    local room = rows - (choices_h + 2) - 2
    local h = math.max(1, math.min(rows_of(detail, width), room))
    if room < 3 then
      -- A screen too small for both: the detail keeps three rows and the
      -- choices shrink (they scroll; the cursor stays on an item).
      h = math.min(rows_of(detail, width), 3)
      out.choices.height = math.max(1, rows - h - 4)
    end
    out.detail = { row = 0, height = h }
    out.choices.row = h + 2
  else
    out.choices.row = math.max(0, math.floor((rows - choices_h - 2) / 2))
  end
  return out
end

local function valid(w)
  return w ~= nil and api.nvim_win_is_valid(w)
end

local function close_win(w)
  if w and api.nvim_win_is_valid(w) then
    pcall(api.nvim_win_close, w, true)
  end
end

-- The choices buffer: the head lines, the items, the hint. Returns the
-- buffer and the first and last item rows (1-based).
local function fill_choices(h)
  local lines = {}
  vim.list_extend(lines, h.head)
  local first = #lines + 1
  for _, it in ipairs(h.items) do
    table.insert(lines, "  " .. it)
  end
  local last = #lines
  table.insert(lines, h.detail_win and HINT or HINT_PLAIN)
  set_lines(h.cbuf, lines)
  api.nvim_buf_clear_namespace(h.cbuf, ns, 0, -1)
  for i = 1, #h.head do
    api.nvim_buf_add_highlight(h.cbuf, ns, i == 1 and "Title" or "Comment", i - 1, 0, -1)
  end
  api.nvim_buf_add_highlight(h.cbuf, ns, "Comment", #lines - 1, 0, -1)
  h.first, h.last = first, last
end

-- "lines 1–15 of 40 · 25 more lines (<C-d>)" or "all 7 lines shown".
local function scroll_status(h)
  if not (h.detail_win and api.nvim_win_is_valid(h.detail_win)) then
    return nil
  end
  local total = #h.detail
  local top = vim.fn.line("w0", h.detail_win)
  local bot = vim.fn.line("w$", h.detail_win)
  if top <= 1 and bot >= total then
    return string.format("all %d line%s shown above", total, total == 1 and "" or "s")
  end
  local more = total - bot
  local s = string.format("lines %d–%d of %d shown", top, bot, total)
  if more > 0 then
    s = s .. string.format(" · %d more line%s: <C-d> scrolls, <Tab> reads", more, more == 1 and "" or "s")
  end
  return s
end

local function refresh_status(h)
  if h.external then
    return
  end
  local s = scroll_status(h)
  if s and h.head[#h.head] ~= s then
    h.head[#h.head] = s
    local row = valid(h.cwin) and api.nvim_win_get_cursor(h.cwin)[1] or h.first
    fill_choices(h)
    pcall(api.nvim_win_set_cursor, h.cwin, { row, 0 })
    if h.show_current then
      h.show_current()
    end
  end
end

local function place(h)
  local rows = vim.o.lines - vim.o.cmdheight
  local head = vim.deepcopy(h.head)
  local lay = M.layout(vim.o.columns, rows, head, h.items, h.detail)
  local col = math.max(0, math.floor((vim.o.columns - lay.width) / 2) - 1)
  local function cfg(row, height, focusable)
    return {
      relative = "editor",
      row = row,
      col = col,
      width = lay.width,
      height = height,
      style = "minimal",
      border = "rounded",
      focusable = focusable,
      zindex = 60,
    }
  end
  if lay.detail then
    local c = cfg(lay.detail.row, lay.detail.height, true)
    if h.detail_win and api.nvim_win_is_valid(h.detail_win) then
      api.nvim_win_set_config(h.detail_win, c)
    else
      h.detail_win = api.nvim_open_win(h.dbuf, false, c)
      wo(h.detail_win, { wrap = true, linebreak = false, cursorline = false, number = false, signcolumn = "no" })
    end
  end
  local c = cfg(lay.choices.row, lay.choices.height, true)
  if h.cwin and valid(h.cwin) then
    api.nvim_win_set_config(h.cwin, c)
  else
    h.cwin = api.nvim_open_win(h.cbuf, false, c)
    wo(h.cwin, { wrap = true, cursorline = true, number = false, signcolumn = "no" })
    pcall(api.nvim_win_set_cursor, h.cwin, { h.first, 0 })
  end
end

local function map(buf, lhs, fn)
  vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true })
end

-- Keys of the choices window. Every printable key is mapped, so a word typed
-- into the window by mistake runs no normal-mode command (no digit picks).
local LHS = { [" "] = "<Space>", ["<"] = "<lt>", ["|"] = "<Bar>", ["\\"] = "<Bslash>" }

local function keymaps(h)
  local b = h.cbuf
  -- A printable key that is no answer means the user was typing somewhere
  -- else: the question steps aside and the keys typed into it since it took
  -- the focus (j and k included) go where the user was, so nothing they
  -- typed is lost or answers anything.
  h.typed = {}
  local function stray(k)
    return function()
      table.insert(h.typed, k)
      h.stray(table.concat(h.typed))
    end
  end
  for c = 32, 126 do
    local k = string.char(c)
    if k ~= "j" and k ~= "k" then
      map(b, LHS[k] or k, stray(k))
    end
  end
  local function move(d, k)
    return function()
      if k then
        table.insert(h.typed, k)
      end
      local row = api.nvim_win_get_cursor(h.cwin)[1] + d
      row = math.max(h.first, math.min(h.last, row))
      api.nvim_win_set_cursor(h.cwin, { row, 0 })
      h.show_current()
    end
  end
  map(b, "j", move(1, "j"))
  map(b, "k", move(-1, "k"))
  for _, k in ipairs({ "<Down>", "<C-n>" }) do
    map(b, k, move(1))
  end
  for _, k in ipairs({ "<Up>", "<C-p>" }) do
    map(b, k, move(-1))
  end
  map(b, "<CR>", function()
    local row = api.nvim_win_get_cursor(h.cwin)[1]
    if row >= h.first and row <= h.last then
      h.answer(row - h.first + 1)
    end
  end)
  map(b, "<Esc>", function()
    h.later()
  end)
  map(b, "<C-c>", function()
    h.cancel()
  end)
  for _, k in ipairs({ "<C-d>", "<C-u>", "<C-f>", "<C-b>", "<C-e>", "<C-y>" }) do
    map(b, k, function()
      if h.detail_win and api.nvim_win_is_valid(h.detail_win) then
        api.nvim_win_call(h.detail_win, function()
          vim.cmd("normal! " .. termcodes(k))
        end)
        -- The last line shown is known once the window is drawn again.
        vim.schedule(function()
          pcall(refresh_status, h)
        end)
      end
    end)
  end
  map(b, "<Tab>", function()
    if h.detail_win and api.nvim_win_is_valid(h.detail_win) then
      h.reading = true
      api.nvim_set_current_win(h.detail_win)
    end
  end)
  if h.dbuf then
    local function back()
      h.reading = false
      if valid(h.cwin) then
        api.nvim_set_current_win(h.cwin)
      end
    end
    map(h.dbuf, "<Tab>", back)
    map(h.dbuf, "<Esc>", back)
    map(h.dbuf, "q", back)
  end
end

--- Opens the window for question q = { prompt, items, info (lines),
--- detail (string or nil), filetype, name (the detail buffer's name) }
--- without the focus. cb = { answer(i) (i: 1-based index into items),
--- later() (the user put it back to wait or left it), cancel() (<C-c>),
--- stray(keys) (printable keys that answer nothing, to replay) }.
--- Returns a handle: focus(), close(), wins().
function M.open(q, cb)
  local h = { items = q.items, answer = cb.answer, later = cb.later, cancel = cb.cancel, stray = cb.stray }
  h.head = { q.prompt }
  if q.info and #q.info > 0 then
    table.insert(h.head, table.concat(q.info, " · "))
  end
  if q.detail and q.detail ~= "" then
    h.detail = vim.split(q.detail, "\n", { plain = true })
    if #h.detail > 1 and h.detail[#h.detail] == "" then
      table.remove(h.detail) -- the newline that ends the text
    end
    h.dbuf = scratch(q.name)
    set_lines(h.dbuf, h.detail)
    if q.filetype and q.filetype ~= "" then
      vim.bo[h.dbuf].filetype = q.filetype
    end
    table.insert(h.head, "") -- the scroll status, once the window exists
  end
  h.cbuf = scratch(nil)
  vim.bo[h.cbuf].bufhidden = "wipe"
  fill_choices(h)
  place(h)
  if h.dbuf then
    h.head[#h.head] = scroll_status(h) or ""
    fill_choices(h)
    place(h)
    pcall(api.nvim_win_set_cursor, h.cwin, { h.first, 0 })
  end
  keymaps(h)
  h.group = api.nvim_create_augroup("FidoQuestionWin" .. h.cbuf, { clear = true })
  api.nvim_create_autocmd("VimResized", {
    group = h.group,
    callback = function()
      if not h.external then
        pcall(place, h)
        pcall(refresh_status, h)
      end
    end,
  })
  -- The cursor stays on an item (a mouse click, G, gg), marked "▸".
  local mark = api.nvim_create_namespace("fido_questionwin_mark")
  local function show_current()
    api.nvim_buf_clear_namespace(h.cbuf, mark, 0, -1)
    if h.first > h.last or not valid(h.cwin) then
      return
    end
    local row = api.nvim_win_get_cursor(h.cwin)[1]
    if row < h.first or row > h.last then
      row = math.max(h.first, math.min(h.last, row))
      pcall(api.nvim_win_set_cursor, h.cwin, { row, 0 })
    end
    api.nvim_buf_set_extmark(
      h.cbuf,
      mark,
      row - 1,
      0,
      { virt_text = { { "▸", "Title" } }, virt_text_pos = "overlay" }
    )
  end
  h.show_current = show_current
  show_current()
  api.nvim_create_autocmd("CursorMoved", {
    group = h.group,
    buffer = h.cbuf,
    callback = show_current,
  })
  if h.dbuf then
    api.nvim_create_autocmd("WinScrolled", {
      group = h.group,
      callback = function()
        pcall(refresh_status, h)
      end,
    })
  end

  function h.focused()
    local w = api.nvim_get_current_win()
    return w == h.cwin or w == h.detail_win
  end

  --- Gives the choices window the focus (normal mode); afterwards focus
  --- leaving both windows counts as "later".
  function h.focus()
    h.typed = {}
    if valid(h.cwin) then
      api.nvim_set_current_win(h.cwin)
    end
    -- Normal mode, also when a picker that just closed (a terminal one,
    -- fzf-lua) left insert or terminal mode behind after this call.
    local function normal()
      local m = api.nvim_get_mode().mode:sub(1, 1)
      if h.open_ and h.focused() and (m == "i" or m == "R" or m == "t") then
        vim.cmd("stopinsert")
      end
    end
    normal()
    vim.schedule(normal)
    vim.defer_fn(normal, 100)
    api.nvim_create_autocmd("InsertEnter", {
      group = h.group,
      buffer = h.cbuf,
      callback = function()
        vim.schedule(normal)
      end,
    })
    local since = vim.loop.hrtime()
    api.nvim_create_autocmd("WinEnter", {
      group = h.group,
      callback = function()
        vim.schedule(function()
          if not h.open_ or h.focused() then
            return
          end
          if (vim.loop.hrtime() - since) / 1e6 < REFOCUS_MS and valid(h.cwin) then
            -- A picker that just closed gives the focus back to where it
            -- was (mini.pick does, after us): the question keeps it.
            api.nvim_set_current_win(h.cwin)
            normal()
            return
          end
          h.later()
        end)
      end,
    })
  end

  function h.wins()
    local out = {}
    for _, w in ipairs({ h.detail_win, h.cwin }) do
      if w and api.nvim_win_is_valid(w) then
        table.insert(out, w)
      end
    end
    return out
  end

  --- The detail float alone stays (beside another picker), unfocusable,
  --- with what the choices window said above the detail (the picker shows
  --- the prompt). Returns its window.
  function h.detail_only()
    h.external = true
    local n = h.dbuf and #h.head - 1 or #h.head -- without the scroll status
    if not (h.detail_win and api.nvim_win_is_valid(h.detail_win)) then
      -- No detail: the prompt and its lines stay, as the picker may cut them.
      if not valid(h.cwin) then
        return nil
      end
      set_lines(h.cbuf, vim.list_slice(h.head, 1, n))
      api.nvim_buf_clear_namespace(h.cbuf, api.nvim_create_namespace("fido_questionwin_mark"), 0, -1)
      local c = api.nvim_win_get_config(h.cwin)
      c.focusable, c.zindex = false, 45
      c.height = rows_of(vim.list_slice(h.head, 1, n), c.width)
      api.nvim_win_set_config(h.cwin, c)
      pcall(function()
        vim.wo[h.cwin].cursorline = false
      end)
      h.detail_win, h.cwin = h.cwin, nil
      return h.detail_win
    end
    close_win(h.cwin)
    local head = {}
    for i = 1, n do
      table.insert(head, "# " .. h.head[i])
    end
    local lines = vim.list_extend(vim.deepcopy(head), h.detail)
    set_lines(h.dbuf, lines)
    for i = 1, #head do
      api.nvim_buf_add_highlight(h.dbuf, ns, "Comment", i - 1, 0, -1)
    end
    h.detail = lines
    local c = api.nvim_win_get_config(h.detail_win)
    c.focusable = false
    c.zindex = 45
    c.height = math.min(rows_of(lines, c.width), math.max(1, vim.o.lines - vim.o.cmdheight - 2))
    api.nvim_win_set_config(h.detail_win, c)
    return h.detail_win
  end

  function h.close()
    h.open_ = false
    pcall(api.nvim_del_augroup_by_id, h.group)
    local back = h.focused() and h.prev
    close_win(h.cwin)
    close_win(h.detail_win)
    if back and api.nvim_win_is_valid(back) then
      pcall(api.nvim_set_current_win, back)
    end
  end

  h.prev = api.nvim_get_current_win()
  h.open_ = true
  return h
end

return M
