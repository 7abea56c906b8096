package nvim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

func TestSetupValidatesOptions(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	cases := []struct {
		name string
		opts string
		want string // "" = valid
	}{
		{"defaults", `{}`, ""},
		{"all valid", `{ layout = "bottom", width = 0.3, input_height = 5, reasoning = "high", plan = { auto_show = false } }`, ""},
		{"wrong type", `{ width = "wide" }`, "width must be number, got string"},
		{"bad enum", `{ layout = "up" }`, `layout must be one of "right", "left", "bottom", "tab", got "up"`},
		{"nested", `{ plan = { auto_show = 1 } }`, "plan.auto_show must be boolean, got number"},
		{"unknown", `{ colour = true }`, "unknown option colour"},
		{"edit review", `{ edits = "review", review = { keymaps = { hunk = "<leader>r", close = false } } }`, ""},
		{"bad edits", `{ edits = "ask" }`, `edits must be one of "auto", "review", got "ask"`},
		{"bad keymap", `{ review = { keymaps = { hunk = 1 } } }`, "review.keymaps.hunk must be string or boolean, got number"},
		{"unknown keymap", `{ review = { keymaps = { undo = "u" } } }`, "unknown option review.keymaps.undo"},
		{"lsp valid", `{ lsp = { diagnostics = false, wait_ms = 500, request_timeout_ms = 8000 } }`, ""},
		{"lsp bad wait", `{ lsp = { wait_ms = -1 } }`, "lsp.wait_ms must be a whole number of milliseconds"},
		{"lsp bad type", `{ lsp = { diagnostics = "yes" } }`, "lsp.diagnostics must be boolean, got string"},
		{"lsp unknown", `{ lsp = { timeout = 1 } }`, "unknown option lsp.timeout"},
		{"idle timeout", `{ idle_timeout_ms = 90000 }`, ""},
		{"idle timeout not whole", `{ idle_timeout_ms = 0.5 }`, "idle_timeout_ms must be a whole number of milliseconds ≥ 1, got 0.5"},
		{"not a table", `"x"`, "setup() expects a table, got string"},
		{"key command", `{ api_key_cmd = { "pass", "show", "openrouter" }, tavily_api_key_cmd = { "cat", "/k" } }`, ""},
		{"key command as a string", `{ api_key_cmd = "pass show openrouter" }`, "api_key_cmd must be table or nil, got string"},
		{"empty key command", `{ api_key_cmd = {} }`, `api_key_cmd must be a list of non-empty strings`},
		{"key command with a number", `{ tavily_api_key_cmd = { "pass", 1 } }`, `tavily_api_key_cmd must be a list of non-empty strings`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var res map[string]any
			n.Lua(t, &res, `local cfg, err = require("fido.config").resolve(`+c.opts+`)
return { ok = cfg ~= nil, err = err or "", input_height = cfg and cfg.input_height or 0, min_width = cfg and cfg.plan.min_width or 0 }`)
			if c.want == "" {
				assert.Equal(t, true, res["ok"], res["err"])
				assert.NotZero(t, res["input_height"])
				assert.EqualValues(t, 60, res["min_width"], "nested defaults kept")
			} else {
				assert.Equal(t, false, res["ok"])
				assert.Contains(t, res["err"], c.want)
			}
		})
	}
	// setup() reports the error and keeps the previous config.
	n.Lua(t, nil, `_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end`)
	assert.False(t, n.Bool(t, `require("fido").setup({ width = "wide" })`))
	assert.True(t, n.Bool(t, `_G.notes[1]:find("width must be number", 1, true) ~= nil and require("fido.config").values.width == 0.4`))
}

func TestCommandsExistWithoutSetup(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	for _, c := range []string{"Fido", "FidoPlan", "FidoCancel", "FidoReview", "FidoRevert"} {
		assert.True(t, n.Bool(t, `vim.fn.exists(":`+c+`") == 2`), c)
	}
	var comp []string
	n.Lua(t, &comp, `return vim.fn.getcompletion("Fido /re", "cmdline")`)
	assert.Equal(t, []string{"/recall", "/rewind", "/reasoning", "/rename", "/reload-instructions"}, comp)
	n.Lua(t, &comp, `return vim.fn.getcompletion("FidoPlan c", "cmdline")`)
	assert.Equal(t, []string{"clear"}, comp)
}

func TestRangeMention(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	var got []string
	n.Lua(t, &got, `vim.cmd("edit src/x.go")
vim.api.nvim_buf_set_lines(0, 0, -1, false, { "a", "b", "c" })
vim.fn.mkdir("src", "p")
vim.cmd("write")
local m = require("fido.mentions")
return { m.range(0, 2, 3), m.range(0, 2, 2) }`)
	assert.Equal(t, []string{"@src/x.go:2-3", "@src/x.go:2"}, got)
	// :'<,'>Fido without text puts the mention into the input.
	n.Lua(t, nil, `vim.cmd("1,2Fido")`)
	assert.Equal(t, []string{"@src/x.go:1-2 "}, n.Lines(t, "fido://input"))
}
