-- Fido's highlight groups. Every group is defined with `default = true`, so
-- a colorscheme (or the user) that defines the group wins; setup() runs again
-- on ColorScheme because `:highlight clear` drops the defaults.
local M = {}

-- name -> nvim_set_hl attributes (without `default`, added by setup()).
M.groups = {
  FidoSubagent = {
    fg = "#1e1b2e",
    bg = "#a78bfa",
    bold = true,
    ctermfg = 234,
    ctermbg = 141,
    cterm = { bold = true },
  },
  FidoPlanPending = { link = "Comment" },
  FidoPlanInProgress = { link = "Function" },
  FidoPlanBlocked = { link = "ErrorMsg" },
  FidoPlanDone = { link = "String" },
  FidoPlanHeader = { link = "Title" },
  FidoPlanMeta = { link = "Comment" },
  FidoPlanNormal = { link = "NormalFloat" },
  FidoPlanBorder = { link = "FloatBorder" },
  FidoReasoning = { link = "Comment" },
  FidoTool = { link = "Special" },
  FidoError = { link = "ErrorMsg" },
  FidoUser = { link = "Title" },
  FidoHeader = { link = "Title" },
  FidoNotice = { link = "Comment" },
}

-- Whether floats get Pmenu's colours: Neovim before 0.10 links NormalFloat
-- to Pmenu, which the default colours make bright magenta, and Title, String
-- and FloatBorder are unreadable on it. The plan window then uses Normal.
local function float_is_pmenu()
  local f, p = vim.fn.hlID("NormalFloat"), vim.fn.hlID("Pmenu")
  return f > 0 and p > 0 and vim.fn.synIDtrans(f) == vim.fn.synIDtrans(p)
end

--- The attributes each group gets now (links chosen for the colours in use).
function M.resolved()
  local out = vim.deepcopy(M.groups)
  if float_is_pmenu() then
    out.FidoPlanNormal = { link = "Normal" }
    out.FidoPlanBorder = { link = "Normal" }
  end
  return out
end

local function define()
  for name, attrs in pairs(M.resolved()) do
    local hl = vim.deepcopy(attrs)
    hl.default = true
    vim.api.nvim_set_hl(0, name, hl)
  end
end

-- setup() defines the groups and re-defines them after every colorscheme
-- change. Safe to call more than once.
function M.setup()
  define()
  local group = vim.api.nvim_create_augroup("FidoHighlights", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = define })
end

return M
