package nvim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// barState is what the tests read back about the subagent bar.
type barState struct {
	Winbar     bool           `msgpack:"winbar"`
	Transcript int            `msgpack:"transcript"`
	Current    int            `msgpack:"current"`
	Mode       string         `msgpack:"mode"`
	Bar        string         `msgpack:"bar"`      // the winbar option (0.8+)
	Rendered   string         `msgpack:"rendered"` // the winbar as drawn (0.8+)
	Groups     []string       `msgpack:"groups"`   // highlight groups of the drawn winbar
	Float      int            `msgpack:"float"`    // the 0.7 float
	Config     map[string]any `msgpack:"config"`
	FloatText  string         `msgpack:"float_text"`
	WinHL      string         `msgpack:"winhl"`
	Width      int            `msgpack:"width"`
}

const readBar = `
local act = require("fido.activity")
local tw = require("fido.layout").transcript_win()
local st = {
  winbar = act.uses_winbar(),
  transcript = tw or 0,
  current = vim.api.nvim_get_current_win(),
  mode = vim.api.nvim_get_mode().mode,
  float = act.float() or 0,
  groups = {},
}
if tw then st.width = vim.api.nvim_win_get_width(tw) end
if st.winbar and tw then
  st.bar = vim.wo[tw].winbar
  local r = vim.api.nvim_eval_statusline(st.bar, { winid = tw, use_winbar = true, highlights = true })
  st.rendered = r.str
  for _, h in ipairs(r.highlights or {}) do table.insert(st.groups, h.group) end
end
local f = act.float()
if f then
  st.config = vim.api.nvim_win_get_config(f)
  st.float_text = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(f), 0, -1, false)[1]
  st.winhl = vim.wo[f].winhighlight
end
return st`

func readBarState(t *testing.T, n *nvimtest.Nvim) barState {
	t.Helper()
	var st barState
	n.Lua(t, &st, readBar)
	return st
}

func applyActivity(t *testing.T, n *nvimtest.Nvim, s *agent.SubagentStatus) barState {
	t.Helper()
	n.Lua(t, nil, `require("fido.activity").apply(...)`, ActivityView(s))
	return readBarState(t, n)
}

// assertBarShows checks the bar shows text in FidoSubagent: the winbar where
// the editor has one, else the one-line float pinned to the transcript's top.
func assertBarShows(t *testing.T, st barState, text string) {
	t.Helper()
	require.NotZero(t, st.Transcript)
	if st.Winbar {
		assert.Contains(t, st.Bar, "%#FidoSubagent#")
		assert.Contains(t, st.Rendered, text)
		assert.Contains(t, st.Groups, "FidoSubagent")
		assert.Zero(t, st.Float, "no float where the winbar exists")
		return
	}
	require.NotZero(t, st.Float, "the 0.7 float is open")
	assert.Equal(t, "win", st.Config["relative"])
	assert.Equal(t, float64(st.Transcript), num(st.Config["win"]))
	assert.Equal(t, float64(0), num(st.Config["row"]))
	assert.Equal(t, float64(0), num(st.Config["col"]))
	assert.Equal(t, float64(1), num(st.Config["height"]))
	assert.Equal(t, float64(st.Width), num(st.Config["width"]), "as wide as the transcript window")
	assert.Equal(t, false, st.Config["focusable"])
	assert.Equal(t, float64(60), num(st.Config["zindex"]))
	assert.Contains(t, st.WinHL, "Normal:FidoSubagent")
	assert.Equal(t, " "+text, st.FloatText)
}

func assertBarHidden(t *testing.T, st barState, prevWinbar string) {
	t.Helper()
	assert.Zero(t, st.Float)
	if st.Winbar {
		assert.Equal(t, prevWinbar, st.Bar, "the previous winbar is back")
	}
}

func TestActivityBarDuringAndAfterARun(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 200; vim.o.lines = 40; require("fido.layout").open(true)`)
	if n.Bool(t, `vim.fn.exists("+winbar") == 1`) {
		n.Lua(t, nil, `vim.wo[require("fido.layout").transcript_win()].winbar = "prev bar"`)
	}
	before := readBarState(t, n)
	require.NotZero(t, before.Transcript)
	require.Zero(t, before.Float)
	// Typing in the input window when the bar appears.
	n.Lua(t, nil, `vim.cmd("startinsert")`)
	n.WaitFor(t, `vim.api.nvim_get_mode().mode == "i"`, 2*time.Second)

	phases := []*agent.SubagentStatus{
		{AgentID: "agent-7f3a9c21d4", Phase: "starting", Elapsed: 100 * time.Millisecond},
		{AgentID: "agent-7f3a9c21d4", Phase: "reasoning", Elapsed: 1200 * time.Millisecond},
		{AgentID: "agent-7f3a9c21d4", Phase: "ripgrep", Detail: "100% of\nplan/*.go", Elapsed: 2500 * time.Millisecond},
		{AgentID: "agent-7f3a9c21d4", Phase: "completed", Detail: "4 findings", Elapsed: 63 * time.Second, Done: true},
	}
	for _, s := range phases {
		st := applyActivity(t, n, s)
		text := ActivityView(s).Text
		assertBarShows(t, st, text)
		assert.Equal(t, before.Current, st.Current, "focus never moves")
		assert.Equal(t, "i", st.Mode, "the input keeps insert mode")
		if st.Winbar && strings.Contains(s.Detail, "%") {
			assert.Contains(t, st.Bar, "100%% of plan/*.go", "statusline %% escaped")
		}
	}
	final := readBarState(t, n)
	assert.True(t, strings.Contains(final.Rendered+final.FloatText, "SUBAGENT 3a9c21d4 · completed · 4 findings · 1m03s"),
		"the final outcome stays: %q %q", final.Rendered, final.FloatText)

	// The parent turn advanced: hidden.
	st := applyActivity(t, n, nil)
	assertBarHidden(t, st, "prev bar")
	assert.Equal(t, before.Current, st.Current)
}

// The bar arrives before the layout exists (or while it is closed): it is
// kept and shown when the layout opens.
func TestActivityBarBeforeTheLayout(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	s := &agent.SubagentStatus{AgentID: "a-0123456789", Phase: "read_file", Detail: "go.mod", Elapsed: time.Second}
	n.Lua(t, nil, `vim.o.columns = 200; require("fido.activity").apply(...)`, ActivityView(s))
	assert.True(t, n.Bool(t, `require("fido.activity").float() == nil`))
	n.Lua(t, nil, `require("fido.layout").open(false)`)
	assertBarShows(t, readBarState(t, n), ActivityView(s).Text)

	// Closed and reopened (/quit, :Fido): shown again on the new window.
	n.Lua(t, nil, `require("fido.layout").close()`)
	n.Lua(t, nil, `vim.wait(30); require("fido.layout").open(false)`)
	assertBarShows(t, readBarState(t, n), ActivityView(s).Text)
	assertBarHidden(t, applyActivity(t, n, nil), "")
}

// On 0.7 the float follows the transcript window when it is resized.
func TestActivityBarFloatFollowsTheTranscriptWindow(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	if n.Bool(t, `vim.fn.exists("+winbar") == 1`) {
		t.Skip("this Neovim shows the bar in the winbar")
	}
	n.Lua(t, nil, `vim.o.columns = 120; vim.o.lines = 40; require("fido.layout").open(false)`)
	s := &agent.SubagentStatus{AgentID: "a-0123456789", Phase: "reviewing", Elapsed: time.Second}
	st := applyActivity(t, n, s)
	assertBarShows(t, st, ActivityView(s).Text)
	n.Lua(t, nil, `vim.api.nvim_win_set_width(require("fido.layout").transcript_win(), 33)`)
	n.WaitFor(t, `vim.api.nvim_win_get_config(require("fido.activity").float()).width == 33`, 2*time.Second,
		`vim.api.nvim_win_get_config(require("fido.activity").float()).width`)
	n.Lua(t, nil, `vim.o.columns = 90`)
	n.WaitFor(t, `vim.api.nvim_win_get_config(require("fido.activity").float()).width == vim.api.nvim_win_get_width(require("fido.layout").transcript_win())`,
		2*time.Second)
}

// A narrow transcript window cuts the detail, never "SUBAGENT <id> · <phase>"
// nor the elapsed time.
func TestActivityBarNarrowWindowCutsOnlyTheDetail(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 200; vim.o.lines = 40; require("fido.layout").open(false)
vim.api.nvim_win_set_width(require("fido.layout").transcript_win(), 50)`)
	s := &agent.SubagentStatus{AgentID: "a-0123456789", Phase: "read_file",
		Detail: "internal/some/deeply/nested/package/with/a/long/path/file_name.go", Elapsed: time.Second}
	st := applyActivity(t, n, s)
	shown := st.FloatText
	if st.Winbar {
		shown = st.Rendered
	}
	shown = strings.TrimSpace(shown)
	assert.True(t, strings.HasPrefix(shown, "SUBAGENT 23456789 · read_file · "), shown)
	assert.True(t, strings.HasSuffix(shown, " · 1.0s"), shown)
	assert.NotContains(t, shown, s.Detail, "the detail was cut")
}
