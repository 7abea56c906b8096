-- A vim.ui.select that behaves like telescope's and fzf-lua's, for tests: a
-- focused float whose first line is a prompt in insert mode, the items
-- below it. Typed text filters the items, a digit picks that item at once
-- (as fzf-lua's and dressing's number keys do), <CR> picks the first item
-- shown, <Esc> closes it without calling back (as fzf-lua does). What it
-- was asked and every key it read are in _G.test_picker.
_G.test_picker = { opened = {}, typed = {}, chosen = {} }
local P = _G.test_picker
local api = vim.api

vim.ui.select = function(items, opts, on_choice)
  local buf = api.nvim_create_buf(false, true)
  local shown = {}
  local function render(query)
    shown = {}
    local lines = { "> " .. query }
    for i, it in ipairs(items) do
      if query == "" or it:lower():find(query:lower(), 1, true) then
        table.insert(shown, i)
        table.insert(lines, i .. ". " .. it)
      end
    end
    api.nvim_buf_set_lines(buf, 1, -1, false, vim.list_slice(lines, 2))
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, { "> " })
  render("")
  local width = 56
  local height = #items + 1
  local win = api.nvim_open_win(buf, true, {
    relative = "editor",
    row = math.floor((vim.o.lines - height) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    border = "rounded",
    style = "minimal",
    zindex = 50,
  })
  table.insert(P.opened, { prompt = opts.prompt, items = items, kind = opts.kind })
  local done = false
  local function close(idx)
    if done then
      return
    end
    done = true
    vim.cmd("stopinsert")
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
    if idx then
      table.insert(P.chosen, items[idx])
      on_choice(items[idx], idx)
    end
  end
  api.nvim_win_set_cursor(win, { 1, 2 })
  vim.cmd("startinsert!")
  for d = 1, 9 do
    vim.keymap.set("i", tostring(d), function()
      table.insert(P.typed, tostring(d))
      if items[d] then
        close(d)
      end
    end, { buffer = buf })
  end
  vim.keymap.set("i", "<CR>", function()
    table.insert(P.typed, "<CR>")
    close(shown[1])
  end, { buffer = buf })
  vim.keymap.set({ "i", "n" }, "<Esc>", function()
    table.insert(P.typed, "<Esc>")
    close(nil)
  end, { buffer = buf })
  api.nvim_create_autocmd("InsertCharPre", {
    buffer = buf,
    callback = function()
      table.insert(P.typed, vim.v.char)
    end,
  })
  api.nvim_create_autocmd("TextChangedI", {
    buffer = buf,
    callback = function()
      local line = api.nvim_buf_get_lines(buf, 0, 1, false)[1] or ""
      render((line:gsub("^> ?", "")))
    end,
  })
end
