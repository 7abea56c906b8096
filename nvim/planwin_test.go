package nvim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
	"github.com/fido-nvim/fido/plan"
)

// planWinState is what the tests read back from Neovim about the plan float.
type planWinState struct {
	Win        int            `msgpack:"win"`
	Config     map[string]any `msgpack:"config"`
	Name       string         `msgpack:"name"`
	Buftype    string         `msgpack:"buftype"`
	Filetype   string         `msgpack:"filetype"`
	Modifiable bool           `msgpack:"modifiable"`
	Lines      []string       `msgpack:"lines"`
	Marks      []Highlight    `msgpack:"marks"`
	WinHL      string         `msgpack:"winhl"`
	Current    bool           `msgpack:"current"`
}

const readPlanWin = `
local pw = require("fido.planwin")
local w = pw.win()
if not w then return { win = 0 } end
local b = vim.api.nvim_win_get_buf(w)
local ns = vim.api.nvim_get_namespaces().fido_plan
local marks = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })) do
  table.insert(marks, { line = m[2], col_start = m[3], col_end = m[4].end_col, group = m[4].hl_group })
end
table.sort(marks, function(a, b)
  if a.line ~= b.line then return a.line < b.line end
  return a.col_start < b.col_start
end)
return {
  win = w,
  config = vim.api.nvim_win_get_config(w),
  name = vim.api.nvim_buf_get_name(b),
  buftype = vim.bo[b].buftype,
  filetype = vim.bo[b].filetype,
  modifiable = vim.bo[b].modifiable,
  lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
  marks = marks,
  winhl = vim.wo[w].winhighlight,
  current = vim.api.nvim_get_current_win() == w,
}`

func editorDims(t *testing.T, n *nvimtest.Nvim) EditorDims {
	t.Helper()
	var d EditorDims
	n.Lua(t, &d, `return { columns = vim.o.columns, lines = vim.o.lines, cmdheight = vim.o.cmdheight }`)
	return d
}

func applyPlan(t *testing.T, n *nvimtest.Nvim, p PlanPayload) planWinState {
	t.Helper()
	n.Lua(t, nil, `require("fido.planwin").apply(...)`, p)
	var st planWinState
	n.Lua(t, &st, readPlanWin)
	return st
}

func num(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	}
	return -1
}

func sortedHighlights(hs []Highlight) []Highlight {
	out := append([]Highlight(nil), hs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			a, b := out[i], out[j]
			if b.Line < a.Line || (b.Line == a.Line && b.ColStart < a.ColStart) {
				out[i], out[j] = b, a
			}
		}
	}
	return out
}

func TestPlanWindowConfigAndContent(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 140; vim.o.lines = 45`)
	var before int
	n.Lua(t, &before, `return vim.api.nvim_get_current_win()`)

	p := PlanView(samplePlan(), editorDims(t, n), true, false, PlanOptions{})
	require.False(t, p.Overlay)
	st := applyPlan(t, n, p)
	require.NotZero(t, st.Win, "the float is open")

	assert.Equal(t, "editor", st.Config["relative"])
	assert.Equal(t, "NE", st.Config["anchor"])
	assert.Equal(t, float64(140), num(st.Config["col"]), "at the right edge")
	assert.Equal(t, float64(1), num(st.Config["row"]))
	assert.Equal(t, float64(p.Width), num(st.Config["width"]))
	assert.Equal(t, float64(p.Height), num(st.Config["height"]))
	assert.Equal(t, false, st.Config["focusable"])
	assert.Equal(t, float64(50), num(st.Config["zindex"]))
	assert.Equal(t, fmt.Sprint([]any{"╭", "─", "╮", "│", "╯", "─", "╰", "│"}), fmt.Sprint(st.Config["border"]))
	assert.Equal(t, "fido://plan", st.Name)
	assert.Equal(t, "nofile", st.Buftype)
	assert.Equal(t, "fidoplan", st.Filetype)
	assert.False(t, st.Modifiable, "the user cannot edit the plan")
	assert.Equal(t, p.Lines, st.Lines)
	assert.Equal(t, sortedHighlights(p.Highlights), st.Marks, "every highlight span is an extmark")
	assert.Contains(t, st.WinHL, "FloatBorder:FidoPlanBorder")
	assert.False(t, st.Current, "an unfocused plan never takes the cursor")
	var after int
	n.Lua(t, &after, `return vim.api.nvim_get_current_win()`)
	assert.Equal(t, before, after)

	groups := map[string]bool{}
	for _, m := range st.Marks {
		groups[m.Group] = true
	}
	for _, g := range []string{plan.GroupPending, plan.GroupInProgress, plan.GroupBlocked, plan.GroupDone} {
		assert.True(t, groups[g], "extmarks use %s", g)
	}

	// An update reuses the same window and buffer and replaces everything.
	q := samplePlan()
	q.Version = 4
	q.Items = q.Items[:1]
	p2 := PlanView(q, editorDims(t, n), true, false, PlanOptions{})
	st2 := applyPlan(t, n, p2)
	assert.Equal(t, st.Win, st2.Win)
	assert.Equal(t, p2.Lines, st2.Lines)
	assert.Equal(t, sortedHighlights(p2.Highlights), st2.Marks)
	assert.Equal(t, float64(p2.Height), num(st2.Config["height"]))

	// :FidoPlan's focus request makes it focusable and enters it.
	st3 := applyPlan(t, n, PlanView(q, editorDims(t, n), true, true, PlanOptions{}))
	assert.Equal(t, st.Win, st3.Win)
	assert.Equal(t, true, st3.Config["focusable"])
	assert.True(t, st3.Current, "the cursor is in the plan")
	// A later update (no focus request) does not throw the user out.
	st4 := applyPlan(t, n, PlanView(samplePlan(), editorDims(t, n), true, false, PlanOptions{}))
	assert.True(t, st4.Current)
	assert.Equal(t, true, st4.Config["focusable"])
	// Leaving it makes it unfocusable again.
	n.Lua(t, nil, `vim.cmd("wincmd p")`)
	n.WaitFor(t, `vim.api.nvim_win_get_config(require("fido.planwin").win()).focusable == false`, 2*time.Second)

	// Hidden by the host: closed, the buffer stays.
	st5 := applyPlan(t, n, PlanPayload{Visible: false, Lines: []string{}, Highlights: []Highlight{}})
	assert.Zero(t, st5.Win)
	assert.True(t, n.Bool(t, `vim.fn.bufnr("fido://plan") > 0`))
}

func TestPlanWindowNarrowEditorIsFullWidthOverlay(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 50; vim.o.lines = 40`)
	p := PlanView(samplePlan(), editorDims(t, n), true, false, PlanOptions{})
	require.True(t, p.Overlay)
	st := applyPlan(t, n, p)
	require.NotZero(t, st.Win)
	assert.Equal(t, float64(48), num(st.Config["width"]), "columns minus the border")
	assert.Equal(t, float64(50), num(st.Config["col"]))
	assert.Equal(t, "NE", st.Config["anchor"])
	text := " " + strings.Join(st.Lines, " ") + " "
	for _, w := range fieldWords(samplePlan()) {
		assert.Contains(t, text, w, "every item and field is in the overlay")
	}

	// Back to a wide editor: the host re-lays out from the new size.
	n.Lua(t, nil, `vim.o.columns = 150`)
	st2 := applyPlan(t, n, PlanView(samplePlan(), editorDims(t, n), true, false, PlanOptions{}))
	assert.Equal(t, st.Win, st2.Win)
	assert.Less(t, num(st2.Config["width"]), float64(148))
	assert.Equal(t, float64(150), num(st2.Config["col"]))
}

func TestPlanWindowResizeIsReported(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	got := make(chan EditorDims, 16)
	require.NoError(t, n.RegisterHandler("fido_resize", func(d EditorDims) { got <- d }))
	n.Lua(t, nil, `require("fido.host").connected(...)`, n.ChannelID())
	var before int
	n.Lua(t, &before, `return #vim.api.nvim_get_autocmds({ event = "VimResized" })`)
	n.Lua(t, nil, `require("fido.planwin")`)
	n.Lua(t, nil, `vim.o.columns = 90; vim.o.lines = 33; vim.cmd("doautocmd VimResized")`)
	// Setting the options fires VimResized too; the last report is the size.
	want := EditorDims{Columns: 90, Lines: 33, CmdHeight: 1}
	deadline := time.After(5 * time.Second)
	for d := (EditorDims{}); d != want; {
		select {
		case d = <-got:
		case <-deadline:
			t.Fatalf("no fido_resize with %+v after VimResized (last %+v)", want, d)
		}
	}
	var count int
	n.Lua(t, &count, `return #vim.api.nvim_get_autocmds({ event = "VimResized" })`)
	assert.Equal(t, before, count, "the plan window adds no second fido_resize sender")
}

func TestPlanWindowHiddenByUser(t *testing.T) {
	t.Parallel()
	for _, keys := range []string{"q", "<Esc>", ":close<CR>"} {
		t.Run(keys, func(t *testing.T) {
			t.Parallel()
			n := nvimtest.Start(t, nvimtest.Options{})
			hidden := make(chan struct{}, 4)
			require.NoError(t, n.RegisterHandler("fido_plan_hidden", func() { hidden <- struct{}{} }))
			n.Lua(t, nil, `require("fido.host").connected(...)`, n.ChannelID())
			n.Lua(t, nil, `vim.o.columns = 120; vim.o.lines = 40`)
			p := PlanView(samplePlan(), editorDims(t, n), true, true, PlanOptions{})
			st := applyPlan(t, n, p)
			require.True(t, st.Current)

			_, err := n.Input(keys)
			require.NoError(t, err)
			select {
			case <-hidden:
			case <-time.After(5 * time.Second):
				t.Fatal("no fido_plan_hidden")
			}
			n.WaitFor(t, `require("fido.planwin").win() == nil`, 2*time.Second)
			assert.False(t, n.Bool(t, `vim.api.nvim_buf_get_name(0) == "fido://plan"`), "the cursor left the plan")

			// Shown again without losing state.
			st2 := applyPlan(t, n, PlanView(samplePlan(), editorDims(t, n), true, false, PlanOptions{}))
			require.NotZero(t, st2.Win)
			assert.Equal(t, p.Lines, st2.Lines)
			// Closing it from the host is not reported as the user's doing.
			applyPlan(t, n, PlanPayload{Visible: false, Lines: []string{}, Highlights: []Highlight{}})
			n.Lua(t, nil, `vim.wait(50)`)
			assert.Empty(t, hidden)
		})
	}
}

func TestPlanWindowScrollsToTheItemInProgress(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `vim.o.columns = 120; vim.o.lines = 24`)
	p := samplePlan()
	for i := 0; i < 8; i++ {
		p.Items = append([]plan.Item{{ID: fmt.Sprintf("early-%d", i), Title: "Done early", Status: plan.Done,
			Evidence: []string{"checked"}}}, p.Items...)
	}
	payload := PlanView(p, editorDims(t, n), true, false, PlanOptions{})
	require.Greater(t, len(payload.Lines), payload.Height, "content taller than the float")
	target := -1
	for _, h := range payload.Highlights {
		if h.Group == plan.GroupInProgress {
			target = h.Line + 1
			break
		}
	}
	require.Positive(t, target)
	st := applyPlan(t, n, payload)
	require.NotZero(t, st.Win)
	var view struct {
		Top int `msgpack:"top"`
		Bot int `msgpack:"bot"`
	}
	n.Lua(t, &view, `local w = require("fido.planwin").win()
return vim.api.nvim_win_call(w, function() return { top = vim.fn.line("w0"), bot = vim.fn.line("w$") } end)`)
	assert.LessOrEqual(t, view.Top, target)
	assert.GreaterOrEqual(t, view.Bot, target, "the item in progress is in view")
	assert.Greater(t, view.Top, 1, "scrolled")

	// With the item in progress near the top, the header stays in view.
	n.Lua(t, nil, `vim.o.lines = 30`)
	short := PlanView(samplePlan(), editorDims(t, n), true, false, PlanOptions{})
	require.Greater(t, len(short.Lines), short.Height, "still taller than the float")
	applyPlan(t, n, short)
	n.Lua(t, &view, `local w = require("fido.planwin").win()
return vim.api.nvim_win_call(w, function() return { top = vim.fn.line("w0"), bot = vim.fn.line("w$") } end)`)
	assert.Equal(t, 1, view.Top)
}

func TestPlanWindowBeforeAnyPayload(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	assert.True(t, n.Bool(t, `require("fido.planwin").win() == nil`))
	n.Lua(t, nil, `require("fido.planwin").refresh(); require("fido.planwin").hide()`)
	assert.True(t, n.Bool(t, `require("fido.planwin").win() == nil`))
}

// close() (the layout closing) is not the user hiding the plan: nothing is
// reported and refresh() brings the float back, unfocused.
func TestPlanWindowCloseAndRefresh(t *testing.T) {
	t.Parallel()
	n := nvimtest.Start(t, nvimtest.Options{})
	hidden := make(chan struct{}, 4)
	require.NoError(t, n.RegisterHandler("fido_plan_hidden", func() { hidden <- struct{}{} }))
	n.Lua(t, nil, `require("fido.host").connected(...)`, n.ChannelID())
	p := PlanView(samplePlan(), editorDims(t, n), true, true, PlanOptions{})
	st := applyPlan(t, n, p)
	require.True(t, st.Current)
	n.Lua(t, nil, `require("fido.planwin").close()`)
	assert.True(t, n.Bool(t, `require("fido.planwin").win() == nil`))
	n.Lua(t, nil, `require("fido.planwin").refresh()`)
	var again planWinState
	n.Lua(t, &again, readPlanWin)
	require.NotZero(t, again.Win)
	assert.Equal(t, p.Lines, again.Lines)
	assert.False(t, again.Current, "a refresh does not repeat the focus request")
	assert.Equal(t, false, again.Config["focusable"])
	n.Lua(t, nil, `vim.wait(50)`)
	assert.Empty(t, hidden)
}
