-- Slash commands: the built-in ones and those the running host knows (the
-- user's command files, MCP prompts), for completion and :checkhealth.
local M = {}

local host = require("fido.host")

--- The built-in slash commands (the host's agent.Commands; a test keeps
--- them in step), with their fixed arguments.
---@type string[]
M.names = {
  "/plan",
  "/plan clear",
  "/suspend",
  "/recall",
  "/undo",
  "/undo revert",
  "/rewind",
  "/edits",
  "/edits auto",
  "/edits review",
  "/reasoning",
  "/new",
  "/sessions",
  "/sessions delete",
  "/rename",
  "/fork",
  "/compact",
  "/mode",
  "/model",
  "/model refresh",
  "/permissions",
  "/reload-instructions",
  "/help",
  "/quit",
  "/mcp",
  "/mcp reload",
  "/mcp trust reset",
}
--- The arguments each built-in command completes.
---@type table<string, string[]>
M.args = {
  ["/plan"] = { "clear" },
  ["/edits"] = { "auto", "review" },
  ["/undo"] = { "revert" },
  ["/reasoning"] = { "minimal", "low", "medium", "high", "default" },
  ["/sessions"] = { "delete" },
  ["/mode"] = { "plan", "default", "auto-edit" },
  ["/mcp"] = { "reload", "trust reset" },
}

--- Every slash command: the built-in ones, then those the running host finds
--- in .fido/commands, ~/.config/fido/commands and .claude/commands (asked
--- afresh each time, so a new file needs no restart). Each item is
--- { name, args, help }.
---@return { name: string, args: string, help: string }[]
function M.all()
  local out, seen = {}, {}
  local chan = host.chan()
  if chan then
    local ok, list = pcall(vim.rpcrequest, chan, "fido_commands")
    if ok and type(list) == "table" then
      for _, c in ipairs(list) do
        if not seen[c.name] then
          seen[c.name] = true
          table.insert(out, c)
        end
      end
    end
  end
  for _, name in ipairs(M.names) do
    if not name:find(" ") and not seen[name] then
      seen[name] = true
      table.insert(out, { name = name, args = "", help = "" })
    end
  end
  return out
end

--- The model ids the running host knows (its cached model list).
---@return string[]
function M.models()
  local chan = host.chan()
  if not chan then
    return {}
  end
  local ok, list = pcall(vim.rpcrequest, chan, "fido_models")
  return (ok and type(list) == "table") and list or {}
end

return M
