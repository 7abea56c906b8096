-- The sidebar: the transcript window (fido://transcript) above a small input
-- window (fido://input).
local M = {}

local api = vim.api
local activity = require("fido.activity")
local config = require("fido.config")
local lualine = require("fido.lualine")
local mentions = require("fido.mentions")
local planwin = require("fido.planwin")
local questions = require("fido.questions")
local turn = require("fido.turn")
local windows = require("fido.windows")

local state = { lualine_told = false }

local function scratch(name, filetype)
  local existing = vim.fn.bufnr(name)
  local b = existing > 0 and existing or api.nvim_create_buf(false, true)
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "hide"
  vim.bo[b].swapfile = false
  if existing <= 0 then
    api.nvim_buf_set_name(b, name)
  end
  vim.bo[b].filetype = filetype
  return b
end

local function map(buf, modes, lhs, rhs, desc)
  vim.keymap.set(modes, lhs, rhs, { buffer = buf, silent = true, nowait = true, desc = desc })
end

-- The answer key (questions.key, normal mode): opens the question that
-- waits while the user writes (fido.questions).
local function map_answer_key(buf)
  local key = (config.values.questions or {}).key
  if type(key) == "string" and key ~= "" then
    map(buf, "n", key, questions.answer_key, "Fido: answer the waiting approval or question")
  end
end

--- Submits the input buffer's text and clears it.
function M.submit_input()
  local b = M.input_buf()
  local text = table.concat(api.nvim_buf_get_lines(b, 0, -1, false), "\n")
  text = text:gsub("^%s+", ""):gsub("%s+$", "")
  if text == "" then
    return
  end
  api.nvim_buf_set_lines(b, 0, -1, false, {})
  turn.submit(text)
end

--- A cursor column past the end of any line (Neovim clamps it to the end).
M.END_COL = 2147483647

--- The transcript buffer, created on first use.
function M.transcript_buf()
  local b = windows.buf("transcript")
  if b and not api.nvim_buf_is_loaded(b) then
    vim.fn.bufload(b) -- :bdelete unloaded it (the host resends its lines)
  end
  if not b then
    b = scratch("fido://transcript", "fido")
    windows.set_buf("transcript", b)
    vim.bo[b].modifiable = false
    -- Only Fido writes it, through the API, in one never-closed undo block
    -- that would keep every line it ever replaced or trimmed.
    vim.bo[b].undolevels = -1
    map(b, "n", "<C-c>", turn.cancel, "Fido: cancel")
    map(b, "n", "i", function()
      M.open()
    end, "Fido: go to the input")
    map_answer_key(b)
  end
  return b
end

--- The input buffer, created on first use.
function M.input_buf()
  local b = windows.buf("input")
  if not b then
    b = scratch("fido://input", "fido_input")
    windows.set_buf("input", b)
    map(b, "n", "<CR>", M.submit_input, "Fido: submit")
    map(b, "i", "<C-s>", function()
      M.submit_input()
    end, "Fido: submit")
    map(b, { "n", "i" }, "<C-c>", turn.cancel, "Fido: cancel")
    vim.bo[b].omnifunc = "v:lua.require'fido.complete'.omnifunc"
    map(b, { "n", "i" }, "<C-o>", function()
      mentions.pick(function()
        return M.input_win() or select(2, M.open(true))
      end)
    end, "Fido: mention a workspace file")
    map_answer_key(b)
  end
  return b
end

--- The transcript window in the current tab, or nil.
M.transcript_win = windows.transcript_win

--- The input window in the current tab, or nil.
M.input_win = windows.input_win

local MIN_CODE = 20 -- columns (lines for "bottom") the code window keeps

-- The sidebar's size for a configured share (≤ 1: a fraction; else a count)
-- of total, leaving the code window at least MIN_CODE (plus the separator)
-- whenever total allows that and a 20-wide sidebar.
local function size(share, total)
  local n
  if share <= 1 then
    n = math.max(20, math.floor(total * share))
  else
    n = math.floor(share)
  end
  local most = total - MIN_CODE - 1
  if most >= 20 then
    n = math.min(n, most)
  end
  return math.max(1, n)
end
M.size = size

-- Sets window-local values (as :setlocal), never the global ones, so the
-- user's other windows keep their 'statusline' and 'wrap'. (A :split copies
-- them into the new window like any local option; editing another buffer
-- there gives that buffer's own values back.)
local function set_wo(w, opts)
  api.nvim_win_call(w, function()
    for k, v in pairs(opts) do
      vim.opt_local[k] = v
    end
  end)
end

local function style_transcript(w)
  vim.w[w].fido_styled = true
  if config.values.layout == "left" or config.values.layout == "right" then
    vim.wo[w].winfixwidth = true
  end
  set_wo(w, {
    wrap = true,
    linebreak = true,
    number = false,
    relativenumber = false,
    signcolumn = "no",
    foldcolumn = "0",
    spell = false,
    list = false,
    cursorline = false,
    statusline = "%!v:lua.require'fido'.statusline()",
  })
end

local INPUT_TITLE, INPUT_KEYS = " Fido input  ", "<CR> send · <C-s> send (insert) · <C-c> cancel"
--- The input window's hints, the left part of its statusline.
M.INPUT_HINTS = INPUT_TITLE .. INPUT_KEYS

local function style_input(w)
  vim.w[w].fido_styled = true
  set_wo(w, {
    wrap = true,
    number = false,
    relativenumber = false,
    signcolumn = "no",
    foldcolumn = "0",
    winfixheight = true,
    statusline = INPUT_TITLE .. "%#Comment#" .. INPUT_KEYS .. "%*%=%{%v:lua.require'fido'.input_status()%}",
  })
end

--- Puts the sidebar back to its configured share (VimResized, after the
--- terminal shrank or grew): the code window never drops under 20 columns
--- while the editor has 60, and growing back restores the share.
function M.fit()
  local cfg = config.values
  local twin = M.transcript_win()
  if not twin or cfg.layout == "tab" then
    return
  end
  if cfg.layout == "bottom" then
    local iwin = M.input_win()
    local ih = iwin and api.nvim_win_get_height(iwin) + 1 or 0
    local total = vim.o.lines - vim.o.cmdheight - 1
    pcall(api.nvim_win_set_height, twin, math.max(1, size(cfg.width, total) - ih))
    return
  end
  pcall(api.nvim_win_set_width, twin, size(cfg.width, vim.o.columns))
end

local function watch_resize()
  local group = api.nvim_create_augroup("FidoLayout", { clear = true })
  api.nvim_create_autocmd("VimResized", {
    group = group,
    callback = function()
      M.fit()
    end,
  })
end

--- Opens the layout, or focuses its input window when it is open.
--- enter=false keeps the cursor where it is.
function M.open(enter)
  if enter == nil then
    enter = true
  end
  local tbuf, ibuf = M.transcript_buf(), M.input_buf()
  local twin, iwin = M.transcript_win(), M.input_win()
  if twin and iwin then
    -- Windows Fido did not make (a restored session's) get its styling
    -- once; the user's own changes to Fido's windows stay.
    if not (vim.w[twin].fido_styled and vim.w[iwin].fido_styled) then
      style_transcript(twin)
      style_input(iwin)
      windows.set_win("transcript", twin)
      windows.set_win("input", iwin)
      watch_resize()
      pcall(activity.refresh)
    end
    if enter then
      api.nvim_set_current_win(iwin)
    end
    return twin, iwin
  end
  local prev = api.nvim_get_current_win()
  local cfg = config.values
  if twin then
    api.nvim_set_current_win(twin)
  elseif iwin then
    api.nvim_set_current_win(iwin)
    vim.cmd("aboveleft split")
    twin = api.nvim_get_current_win()
    api.nvim_win_set_buf(twin, tbuf)
  else
    if cfg.layout == "tab" then
      vim.cmd("tabnew")
    elseif cfg.layout == "left" then
      vim.cmd(string.format("topleft %dvsplit", size(cfg.width, vim.o.columns)))
    elseif cfg.layout == "bottom" then
      vim.cmd(string.format("botright %dsplit", size(cfg.width, vim.o.lines)))
    else
      vim.cmd(string.format("botright %dvsplit", size(cfg.width, vim.o.columns)))
    end
    twin = api.nvim_get_current_win()
    api.nvim_win_set_buf(twin, tbuf)
  end
  style_transcript(twin)
  if not iwin then
    api.nvim_set_current_win(twin)
    vim.cmd(string.format("belowright %dsplit", cfg.input_height))
    iwin = api.nvim_get_current_win()
    api.nvim_win_set_buf(iwin, ibuf)
  end
  style_input(iwin)
  windows.set_win("transcript", twin)
  windows.set_win("input", iwin)
  watch_resize()
  if not state.lualine_told then
    state.lualine_told = true
    local ok, missing = pcall(lualine.missing)
    if ok and missing then
      vim.schedule(function()
        vim.notify(
          "Fido: lualine replaces Fido's statusline and subagent bar; see :checkhealth fido for the "
            .. "disabled_filetypes line to add",
          vim.log.levels.WARN,
          { title = "Fido" }
        )
      end)
    end
  end
  -- Start at the tail (the end of the last line) so the transcript follows
  -- new output.
  api.nvim_win_set_cursor(twin, { api.nvim_buf_line_count(tbuf), M.END_COL })
  if enter then
    api.nvim_set_current_win(iwin)
  elseif api.nvim_win_is_valid(prev) then
    api.nvim_set_current_win(prev)
  end
  pcall(activity.refresh)
  pcall(planwin.refresh)
  return twin, iwin
end

--- Closes Fido's windows (/quit). The buffers stay, so :Fido reopens the
--- conversation as it was. The last window of the editor is never closed.
function M.close()
  for _, w in ipairs({ M.input_win(), M.transcript_win() }) do
    if w and api.nvim_win_is_valid(w) and #api.nvim_tabpage_list_wins(0) > 1 then
      pcall(api.nvim_win_close, w, true)
    end
  end
  pcall(planwin.close)
end

--- Puts text into the input buffer (draft restore, mentions).
function M.set_input(text, append)
  local b = M.input_buf()
  local lines = vim.split(text, "\n", { plain = true })
  if append then
    local cur = api.nvim_buf_get_lines(b, 0, -1, false)
    if #cur == 1 and cur[1] == "" then
      cur = {}
    end
    vim.list_extend(cur, lines)
    lines = cur
  end
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
  local w = M.input_win()
  if w then
    api.nvim_win_set_cursor(w, { #lines, #lines[#lines] })
  end
end

return M
