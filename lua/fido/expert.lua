-- ask_an_expert: the question goes into registers and a float the user can
-- copy from; the expert's answer is pasted back into the same float.
local M = {}
local api = vim.api

local SEPARATOR =
  "──── Paste the expert's answer below this line. <CR> (normal mode) or :w sends it, q cancels. ────"

local state = { id = nil, buf = nil, win = nil, on_done = nil }

local function close()
  if state.win and api.nvim_win_is_valid(state.win) then
    pcall(api.nvim_win_close, state.win, true)
  end
  if state.buf and api.nvim_buf_is_valid(state.buf) then
    pcall(api.nvim_buf_delete, state.buf, { force = true })
  end
  state.win, state.buf = nil, nil
end

--- The answer text: everything below the separator, trimmed.
function M.answer_text(lines)
  local out, seen = {}, false
  for _, l in ipairs(lines) do
    if seen then
      table.insert(out, l)
    elseif l == SEPARATOR then
      seen = true
    end
  end
  local text = table.concat(out, "\n"):gsub("^%s+", ""):gsub("%s+$", "")
  return text
end

local function finish(send)
  local cb, buf = state.on_done, state.buf
  state.on_done = nil
  local text
  if send and buf and api.nvim_buf_is_valid(buf) then
    text = M.answer_text(api.nvim_buf_get_lines(buf, 0, -1, false))
    if text == "" then
      vim.notify(
        "Fido: paste the expert's answer below the line first (q cancels)",
        vim.log.levels.WARN,
        { title = "Fido" }
      )
      state.on_done = cb
      return
    end
  end
  close()
  if cb then
    cb(text)
  end
end

--- Opens the float for question; on_done(text or nil) runs once.
function M.open(question, on_done)
  if state.on_done then
    finish(false)
  end
  pcall(vim.fn.setreg, '"', question)
  pcall(vim.fn.setreg, "+", question)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "markdown"
  pcall(api.nvim_buf_set_name, buf, "fido://expert")
  local lines = { 'Question for a human expert (copied to the " and + registers):', "" }
  vim.list_extend(lines, vim.split(question, "\n", { plain = true }))
  vim.list_extend(lines, { "", SEPARATOR, "" })
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  local width = math.max(40, math.min(100, vim.o.columns - 4))
  local height = math.max(8, math.min(#lines + 10, vim.o.lines - 6))
  local win = api.nvim_open_win(buf, true, {
    relative = "editor",
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    zindex = 70,
    focusable = true,
  })
  vim.wo[win].wrap = true
  state.buf, state.win, state.on_done = buf, win, on_done
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set("n", "<CR>", function()
    finish(true)
  end, opts)
  vim.keymap.set("n", "q", function()
    finish(false)
  end, opts)
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = buf,
    callback = function()
      finish(true)
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      if state.buf == buf then
        state.buf, state.win = nil, nil
        local cb = state.on_done
        state.on_done = nil
        if cb then
          vim.schedule(function()
            cb(nil)
          end)
        end
      end
    end,
  })
  api.nvim_win_set_cursor(win, { #lines, 0 })
end

--- Closes the float without an answer (the host stopped waiting).
function M.cancel()
  if state.on_done then
    state.on_done = nil
    close()
  end
end

M.SEPARATOR = SEPARATOR
return M
