package nvim

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// setStatus pushes a status snapshot as the host would.
const setStatus = `require("fido.bridge").apply({ status = {
  state = "streaming", model = "anthropic/claude-sonnet-4", reasoning = "high",
  usage = { calls = 12, input = 123456, output = 871, cache_read = 19000, cost = 0.0414 },
  subagent_usage = { calls = 3, input = 10, output = 5, cache_read = 0, cost = 0.0123 },
} })`

// The transcript's statusline at 40, 60 and 100 columns: segments are
// dropped whole by priority (subagent totals, then calls, cache, tokens,
// cost), never cut mid-word; the turn state and the model stay longest.
func TestStatuslineKeepsStateAndModelByPriority(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 200`)
	n.Lua(t, nil, `require("fido.layout").open(false)`)
	n.Lua(t, nil, setStatus)
	render := func(width int) string {
		var s string
		n.Lua(t, &s, fmt.Sprintf(`local tw = require("fido.layout").transcript_win()
vim.api.nvim_win_set_width(tw, %d)
local stl = vim.wo[tw].statusline
return vim.api.nvim_eval_statusline(stl, { winid = tw, maxwidth = %d }).str`, width, width))
		return s
	}
	for _, tc := range []struct {
		width      int
		want, lose []string
	}{
		{130, []string{"anthropic/claude-sonnet-4", "high", "streaming", "$0.0414", "in 123k · out 871", "cache 19k", "12 calls", "(sub 3 · $0.0123)"}, nil},
		{100, []string{"anthropic/claude-sonnet-4", "streaming", "$0.0414", "in 123k · out 871", "cache 19k", "12 calls"}, []string{"(sub"}},
		{60, []string{"anthropic/claude-sonnet-4", "streaming", "$0.0414"}, []string{"(sub", "12 calls"}},
		{40, []string{"anthropic/claude-sonnet-4", "streaming"}, []string{"(sub", "calls", "in 123k", "cache"}},
	} {
		got := render(tc.width)
		require.LessOrEqual(t, utf8.RuneCountInString(got), tc.width, "fits in %d columns: %q", tc.width, got)
		for _, w := range tc.want {
			assert.Contains(t, got, w, "at %d columns", tc.width)
		}
		for _, l := range tc.lose {
			assert.NotContains(t, got, l, "at %d columns", tc.width)
		}
		assert.NotContains(t, got, "<", "Neovim never had to cut it")
		// Every kept segment is whole: nothing ends in a cut word.
		for _, frag := range strings.Fields(got) {
			assert.NotContains(t, frag, "…")
		}
	}
}

// The subagent bar at 40, 60 and 100 columns keeps SUBAGENT, the id and
// the phase (and the elapsed time); only the detail shrinks or goes.
func TestSubagentBarKeepsPhaseWhenNarrow(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 200; require("fido.layout").open(false)`)
	text := "SUBAGENT b98750cb · completed · reading the lexer, the parser and their tests · 5.5s"
	n.Lua(t, nil, `require("fido.activity").apply({ visible = true, text = ..., group = "FidoSubagent" })`, text)
	for _, width := range []int{40, 60, 100} {
		var got string
		n.Lua(t, &got, fmt.Sprintf(`local tw = require("fido.layout").transcript_win()
vim.api.nvim_win_set_width(tw, %d)
require("fido.activity").refresh()
if require("fido.activity").uses_winbar() then
  return vim.api.nvim_eval_statusline(vim.wo[tw].winbar, { winid = tw, use_winbar = true, maxwidth = %d }).str
end
return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(require("fido.activity").float()), 0, 1, false)[1]`, width, width))
		assert.True(t, strings.HasPrefix(strings.TrimSpace(got), "SUBAGENT b98750cb · completed"), "%d columns: %q", width, got)
		assert.Contains(t, got, "5.5s", "%d columns", width)
		assert.NotContains(t, got, "<", "%d columns: Neovim never cut it", width)
		assert.LessOrEqual(t, utf8.RuneCountInString(strings.TrimRight(got, " ")), width)
	}
}

// With a global statusline (laststatus=3) the transcript's statusline shows
// only while the transcript is current, so the input's shows the turn state
// and totals beside its hints; with per-window statuslines it keeps to
// its hints.
func TestInputStatuslineCarriesTheStatusUnderAGlobalStatusline(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 160`)
	n.Lua(t, nil, `require("fido.layout").open(false)`)
	n.Lua(t, nil, setStatus)
	render := func() string {
		var s string
		n.Lua(t, &s, `local iw = require("fido.layout").input_win()
return vim.api.nvim_eval_statusline(vim.wo[iw].statusline, { winid = iw, maxwidth = vim.o.columns }).str`)
		return s
	}
	n.Lua(t, nil, `vim.o.laststatus = 2`)
	own := render()
	assert.True(t, strings.HasPrefix(own, " Fido input  <CR> send"), own)
	assert.NotContains(t, own, "streaming")

	n.Lua(t, nil, `vim.o.laststatus = 3`)
	global := render()
	assert.True(t, strings.HasPrefix(global, " Fido input  <CR> send"), global)
	assert.Contains(t, global, "streaming")
	assert.Contains(t, global, "anthropic/claude-sonnet-4")
	assert.Contains(t, global, "12 calls")
	assert.LessOrEqual(t, utf8.RuneCountInString(strings.TrimRight(global, " ")), 160, "it fits the editor's width")
}

// Under a global statusline, while the input is the current window, the
// spinner animates the input's statusline (the status beside the hints),
// not the transcript's drawn in its place.
func TestGlobalStatuslineSpinsInTheInput(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 160; vim.o.laststatus = 3`)
	n.Lua(t, nil, `require("fido.layout").open(true)`)
	n.Lua(t, nil, setStatus)
	row := func() string {
		var s string
		n.Lua(t, &s, `local r, out = vim.o.lines - vim.o.cmdheight, {}
for c = 1, vim.o.columns do out[#out + 1] = vim.fn.screenstring(r, c) end
return table.concat(out)`)
		return s
	}
	var frames []string
	for i := 0; i < 4; i++ {
		time.Sleep(150 * time.Millisecond)
		s := row()
		assert.True(t, strings.HasPrefix(s, " Fido input  <CR> send"), "frame %d: %q", i, s)
		assert.Contains(t, s, "streaming")
		frames = append(frames, s)
	}
	changed := false
	for _, f := range frames[1:] {
		changed = changed || f != frames[0]
	}
	assert.True(t, changed, "the spinner moves: %q", frames)
}
