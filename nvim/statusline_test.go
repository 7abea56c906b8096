package nvim

import (
	"fmt"
	"strings"
	"testing"
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
