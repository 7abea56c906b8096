-- Reviewing Fido's file changes: the preview float shown while the edit
-- approval picker asks (/edits review), and the :FidoReview tab (a quickfix
-- list of hunks, each file beside its before-state in diff mode).
local M = {}

local api = vim.api
local config = require("fido.config")
local host = require("fido.host")
local prefix = "fido://review/"

-- The open review tab: its tabpage, files by absolute path, before buffers,
-- and the file buffers that got review keymaps.
local review = { tab = nil, files = {}, before = {}, mapped = {} }

local preview = { win = nil, buf = nil }

--- Closes the preview float (scheduled; safe to call when none is open).
function M.close_preview()
  vim.schedule(function()
    if preview.win and api.nvim_win_is_valid(preview.win) then
      pcall(api.nvim_win_close, preview.win, true)
    end
    if preview.buf and api.nvim_buf_is_valid(preview.buf) then
      pcall(api.nvim_buf_delete, preview.buf, { force = true })
    end
    preview.win, preview.buf = nil, nil
  end)
end

--- Shows a proposed change (a unified diff) in a float with 'filetype' diff
--- above the editor, until close_preview() (scheduled).
function M.preview(title, diff)
  vim.schedule(function()
    if preview.win and api.nvim_win_is_valid(preview.win) then
      pcall(api.nvim_win_close, preview.win, true)
    end
    local lines = vim.split(diff, "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    table.insert(lines, 1, "# " .. title)
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].filetype = "diff"
    local width = math.max(20, math.min(vim.o.columns - 4, 120))
    local height = math.max(3, math.min(#lines, vim.o.lines - vim.o.cmdheight - 8))
    local win = api.nvim_open_win(buf, false, {
      relative = "editor",
      row = 1,
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
      width = width,
      height = height,
      style = "minimal",
      border = "rounded",
      zindex = 45,
    })
    vim.wo[win].wrap = false
    preview.win, preview.buf = win, buf
    vim.cmd("redraw")
  end)
end

local function in_review_tab()
  return review.tab ~= nil and api.nvim_tabpage_is_valid(review.tab) and api.nvim_get_current_tabpage() == review.tab
end

local function keymaps()
  local cfg = config.values.review or {}
  return vim.tbl_extend("force", { hunk = "gr", file = "gR", close = "q" }, cfg.keymaps or {})
end

-- Buffer-local review keymaps (each can be disabled with false).
local function map(buf)
  local km = keymaps()
  local function set(lhs, rhs, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set("n", lhs, rhs, { buffer = buf, silent = true, desc = desc })
    end
  end
  set(km.hunk, "<Cmd>FidoRevert<CR>", "Fido: revert the hunk under the cursor")
  set(km.file, "<Cmd>FidoRevert!<CR>", "Fido: revert the whole file")
  set(km.close, function()
    M.close()
  end, "Fido: close the review")
end

local function unmap(buf)
  local km = keymaps()
  for _, lhs in ipairs({ km.hunk, km.file, km.close }) do
    if lhs and lhs ~= "" then
      pcall(vim.keymap.del, "n", lhs, { buffer = buf })
    end
  end
end

-- The scratch buffer holding a file's content before Fido's first change.
local function before_buf(f)
  local name = prefix .. f.path
  local buf = -1
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == name then
      buf = b
    end
  end
  if buf < 0 then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, f.before)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local ok, ft = pcall(function()
    return vim.filetype and vim.filetype.match and vim.filetype.match({ filename = f.path })
  end)
  if ok and type(ft) == "string" and ft ~= "" then
    vim.bo[buf].filetype = ft
  end
  map(buf)
  return buf
end

local function qf_win()
  for _, w in ipairs(api.nvim_tabpage_list_wins(review.tab)) do
    if vim.bo[api.nvim_win_get_buf(w)].buftype == "quickfix" then
      return w
    end
  end
end

-- Shows the before-state of the file in win in the tab's other window, both
-- in diff mode.
local function pair(win)
  local buf = api.nvim_win_get_buf(win)
  local f = review.files[vim.fn.resolve(api.nvim_buf_get_name(buf))]
  if not f then
    return
  end
  local other
  local qf = qf_win()
  for _, w in ipairs(api.nvim_tabpage_list_wins(review.tab)) do
    if w ~= win and w ~= qf and api.nvim_win_get_config(w).relative == "" then
      other = w
    end
  end
  if not other then
    return
  end
  vim.cmd("diffoff!")
  api.nvim_win_set_buf(other, review.before[f.abs])
  api.nvim_win_call(other, function()
    vim.cmd("diffthis")
  end)
  api.nvim_win_call(win, function()
    vim.cmd("diffthis")
  end)
  if not review.mapped[buf] then
    review.mapped[buf] = true
    map(buf)
  end
end

-- A list from the host, or {} when it is missing or vim.NIL (a nil list
-- from Go arrives as vim.NIL, which # and ipairs reject).
local function list(v)
  return type(v) == "table" and v or {}
end

--- Opens the review tab for view (from the host), or updates the open one
--- (view.refresh: after a revert). Scheduled.
function M.open(view)
  vim.schedule(function()
    view.files, view.notes = list(view.files), list(view.notes)
    for _, f in ipairs(view.files) do
      f.before = list(f.before)
    end
    local items = {}
    for _, it in ipairs(list(view.items)) do
      local item = { filename = it.filename, lnum = it.lnum, col = 1, text = it.text }
      if type(it.type) == "string" and it.type ~= "" then
        item.type = it.type
      end
      table.insert(items, item)
    end
    if view.refresh then
      if not (review.tab and api.nvim_tabpage_is_valid(review.tab)) then
        return
      end
      review.files = {}
      for _, f in ipairs(view.files) do
        review.files[vim.fn.resolve(f.abs)] = f
      end
      vim.fn.setqflist({}, "r", { title = "Fido review", items = items })
      for _, f in ipairs(view.files) do
        review.before[f.abs] = before_buf(f)
      end
      pcall(vim.cmd, "diffupdate")
      return
    end
    -- One review at a time: a previous one (even if its tab was closed by
    -- hand) goes away with its buffers and keymaps.
    M.close()
    for _, f in ipairs(view.files) do
      review.files[vim.fn.resolve(f.abs)] = f
    end
    for _, f in ipairs(view.files) do
      review.before[f.abs] = before_buf(f)
    end
    vim.cmd("tabnew")
    review.tab = api.nvim_get_current_tabpage()
    local filewin = api.nvim_get_current_win()
    vim.cmd("leftabove vsplit")
    vim.fn.setqflist({}, " ", { title = "Fido review", items = items })
    vim.cmd("botright copen")
    local qfbuf = api.nvim_get_current_buf()
    review.mapped[qfbuf] = true
    map(qfbuf)
    local group = api.nvim_create_augroup("FidoReview", { clear = true })
    api.nvim_create_autocmd("BufWinEnter", {
      group = group,
      callback = function()
        if in_review_tab() then
          local win = api.nvim_get_current_win()
          vim.schedule(function()
            if in_review_tab() and api.nvim_win_is_valid(win) then
              pair(win)
            end
          end)
        end
      end,
    })
    api.nvim_create_autocmd("TabClosed", {
      group = group,
      callback = function()
        vim.schedule(function()
          if review.tab and not api.nvim_tabpage_is_valid(review.tab) then
            M.close()
          end
        end)
      end,
    })
    api.nvim_set_current_win(filewin)
    vim.cmd("cc 1")
    pair(filewin)
    if #view.notes > 0 then
      vim.notify("Fido review: " .. table.concat(view.notes, "; "), vim.log.levels.WARN, { title = "Fido" })
    end
  end)
end

--- Closes the review tab, its before buffers and keymaps.
function M.close()
  pcall(api.nvim_del_augroup_by_name, "FidoReview")
  for buf in pairs(review.mapped) do
    if api.nvim_buf_is_valid(buf) then
      unmap(buf)
    end
  end
  if review.tab and api.nvim_tabpage_is_valid(review.tab) then
    local tab = review.tab
    if #api.nvim_list_tabpages() > 1 then
      if api.nvim_get_current_tabpage() ~= tab then
        api.nvim_set_current_tabpage(tab)
      end
      vim.cmd("diffoff!")
      vim.cmd("tabclose")
    end
  end
  for _, buf in pairs(review.before) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
  review.tab, review.before, review.mapped, review.files = nil, {}, {}, {}
end

--- The open review's tabpage, or nil.
function M.tab()
  if review.tab and api.nvim_tabpage_is_valid(review.tab) then
    return review.tab
  end
end

--- :FidoRevert[!] [reason]: the hunk under the cursor (or the whole file)
--- of the current review window.
function M.revert(whole, reason)
  local name = api.nvim_buf_get_name(0)
  local req = { action = "revert", whole = whole, reason = reason or "", line = vim.fn.line(".") }
  if vim.bo.buftype == "quickfix" then
    -- In the list: the entry under the cursor.
    local item = vim.fn.getqflist()[vim.fn.line(".")]
    if not item or item.bufnr == 0 then
      vim.notify("FidoRevert: no hunk on this line of the list", vim.log.levels.WARN, { title = "Fido" })
      return false
    end
    name, req.line = api.nvim_buf_get_name(item.bufnr), item.lnum
  end
  if name:sub(1, #prefix) == prefix then
    req.path, req.in_before = name:sub(#prefix + 1), true
  else
    req.path, req.in_before = vim.fn.resolve(vim.fn.fnamemodify(name, ":p")), false
  end
  return host.notify("fido_review", req)
end

--- :FidoReview [all].
function M.review(arg)
  return host.notify("fido_review", { action = "open", all = arg == "all" })
end

--- The preview float's window and buffer (for tests), or nil.
function M.preview_win()
  if preview.win and api.nvim_win_is_valid(preview.win) then
    return preview.win, preview.buf
  end
  return nil
end

return M
