package tuitest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys typed into the TUI reach Neovim as typed, the screen comes back at
// the size asked for, and state is read over the socket.
func TestTypeScreenAndState(t *testing.T) {
	u := Start(t, Options{Width: 80, Height: 20, Init: `vim.g.from_init = 42`})
	assert.True(t, u.Bool(`vim.g.from_init == 42`), "Init ran")
	u.Keys("i")
	u.Type("hello tmux")
	u.Keys("Escape")
	screen := u.WaitScreen(t, 5*time.Second, "hello tmux")
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	assert.Len(t, lines, 20, "the terminal's height")
	var text string
	require.NoError(t, u.Lua(2*time.Second, &text, `return vim.api.nvim_get_current_line()`))
	assert.Equal(t, "hello tmux", text)
	u.WaitLua(t, `vim.api.nvim_get_mode().mode == "n"`, 2*time.Second)
	var cols int
	require.NoError(t, u.Lua(2*time.Second, &cols, `return vim.o.columns`))
	assert.Equal(t, 80, cols)
}
