-- What the user asks of the running conversation: send a prompt or a
-- /command, cancel the turn.
local M = {}

local context = require("fido.context")
local host = require("fido.host")
local questions = require("fido.questions")

--- Sends text (a prompt or a /command) to the host, starting it if needed.
---@param text string
---@return boolean sent
function M.submit(text)
  -- @buffer, @diagnostics, @quickfix, @selection: what the editor knows,
  -- attached as it is now.
  if not text:match("^%s*/") then
    text = context.expand(text)
  end
  return host.notify("fido_submit", text)
end

--- Cancels the running turn and any subagent.
function M.cancel()
  -- The host hears of the cancel first (notifications arrive in order), so a
  -- pending approval ends as cancelled, not as the dismissal that closing
  -- its picker sends next.
  if host.chan() then
    host.notify("fido_cancel")
  end
  -- Any open question's picker closes at once.
  questions.cancel_all()
end

return M
