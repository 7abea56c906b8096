package nvim

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// Fido's windows restored by :mksession (auto-session, persistence.nvim)
// come back as plain windows on fido:// buffers: :Fido takes them over,
// styled as its own (statusline, fixed width, no numbers), without opening
// more; a change the user then makes to them stays.
func TestRestoredSessionWindowsAreStyled(t *testing.T) {
	a := nvimtest.Start(t, nvimtest.Options{})
	session := filepath.Join(a.Tmp, "Session.vim")
	a.Lua(t, nil, `require("fido.layout").open(false)
vim.cmd("mksession! " .. vim.fn.fnameescape(...))`, session)

	b := nvimtest.Start(t, nvimtest.Options{})
	b.Lua(t, nil, `vim.cmd("silent source " .. vim.fn.fnameescape(...))`, session)
	type win struct {
		Name       string `msgpack:"name"`
		Statusline string `msgpack:"statusline"`
		FixWidth   bool   `msgpack:"fixwidth"`
		Number     bool   `msgpack:"number"`
		Buftype    string `msgpack:"buftype"`
	}
	const list = `local out = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local buf = vim.api.nvim_win_get_buf(w)
  table.insert(out, { name = vim.api.nvim_buf_get_name(buf), statusline = vim.wo[w].statusline,
    fixwidth = vim.wo[w].winfixwidth, number = vim.wo[w].number, buftype = vim.bo[buf].buftype })
end
return out`
	var before []win
	b.Lua(t, &before, list)
	var names []string
	for _, w := range before {
		names = append(names, w.Name)
	}
	assert.Contains(t, names, "fido://transcript", "the session restored the windows")

	b.Lua(t, nil, `vim.o.number = true
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do vim.wo[w].number = true end
require("fido.layout").open(false)`)
	var after []win
	b.Lua(t, &after, list)
	assert.Len(t, after, len(before), "no new windows")
	for _, w := range after {
		switch w.Name {
		case "fido://transcript":
			assert.Equal(t, "%!v:lua.require'fido'.statusline()", w.Statusline)
			assert.True(t, w.FixWidth)
			assert.False(t, w.Number)
			assert.Equal(t, "nofile", w.Buftype)
		case "fido://input":
			assert.Contains(t, w.Statusline, "Fido input")
			assert.False(t, w.Number)
			assert.Equal(t, "nofile", w.Buftype)
		}
	}

	b.Lua(t, nil, `vim.wo[require("fido.layout").transcript_win()].number = true
require("fido.layout").open(false)`)
	assert.True(t, b.Bool(t, `vim.wo[require("fido.layout").transcript_win()].number`), "the user's change stays")
}
