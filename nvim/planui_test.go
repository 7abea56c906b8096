package nvim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
)

// Through the host: UI.Plan shows the float by itself, the user hides it
// with q (and it stays hidden on updates), ShowPlan brings it back, and a
// narrow editor gets the overlay after VimResized.
func TestHostPlanFloat(t *testing.T) {
	t.Parallel()
	s := startSession(t, nil)
	n := s.n
	n.Lua(t, nil, `vim.o.columns = 150; vim.o.lines = 40
function _G.planVersion()
  local p = require("fido").status().plan
  return p and p.version
end`)
	ui := s.backend.ui
	require.NotNil(t, ui)

	p := samplePlan()
	ui.Plan(p)
	n.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)
	n.WaitFor(t, `vim.api.nvim_win_get_config(require("fido.planwin").win()).width == 53`, 5*time.Second,
		`vim.api.nvim_win_get_config(require("fido.planwin").win())`)
	st := readPlan(t, s)
	want := PlanView(p, EditorDims{Columns: 150, Lines: 40, CmdHeight: 1}, true, false, PlanOptions{})
	assert.Equal(t, want.Lines, st.Lines, "the float shows the plan the model received")
	assert.Equal(t, "NE", st.Config["anchor"])
	assert.Equal(t, float64(150), num(st.Config["col"]))
	assert.False(t, st.Current)
	// status().plan carries the plan (key spelling is the status owner's).
	n.WaitFor(t, `planVersion() == 3`, 5*time.Second)
	// status().plan is the normalized plan with the model's field names.
	n.WaitFor(t, `require("fido").status().plan.items[1].id ~= nil and require("fido").status().plan.updatedAt ~= nil`, 5*time.Second, `require("fido").status().plan`)

	// :FidoPlan focuses it; q hides it and the host keeps it hidden.
	ui.ShowPlan(true)
	n.WaitFor(t, `vim.api.nvim_get_current_win() == require("fido.planwin").win()`, 5*time.Second)
	_, err := n.Input("q")
	require.NoError(t, err)
	n.WaitFor(t, `require("fido.planwin").win() == nil`, 5*time.Second)
	q := samplePlan()
	q.Version = 4
	q.Items[1].Status = plan.Done
	ui.Plan(q)
	n.WaitFor(t, `planVersion() == 4`, 5*time.Second)
	n.Lua(t, nil, `vim.wait(100)`)
	assert.True(t, n.Bool(t, `require("fido.planwin").win() == nil`), "hidden by the user: no auto-show")

	// Shown again with the newest state.
	ui.ShowPlan(false)
	n.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)
	st = readPlan(t, s)
	assert.Equal(t, PlanView(q, EditorDims{Columns: 150, Lines: 40, CmdHeight: 1}, true, false, PlanOptions{}).Lines, st.Lines)
	assert.False(t, st.Current)

	// The editor shrinks: the host re-lays out into a full-width overlay.
	n.Lua(t, nil, `vim.o.columns = 50`)
	n.WaitFor(t, `vim.api.nvim_win_get_config(require("fido.planwin").win()).width == 48`, 5*time.Second,
		`vim.api.nvim_win_get_config(require("fido.planwin").win())`)
	st = readPlan(t, s)
	assert.Equal(t, PlanView(q, EditorDims{Columns: 50, Lines: 40, CmdHeight: 1}, true, false, PlanOptions{}).Lines, st.Lines)
}

// An empty plan: :FidoPlan shows the empty state.
func TestHostPlanFloatEmptyState(t *testing.T) {
	t.Parallel()
	s := startSession(t, nil)
	s.backend.ui.ShowPlan(false)
	s.n.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)
	st := readPlan(t, s)
	require.NotEmpty(t, st.Lines)
	assert.Contains(t, st.Lines[0], "No plan yet")
}

func readPlan(t *testing.T, s *session) planWinState {
	t.Helper()
	var st planWinState
	s.n.Lua(t, &st, readPlanWin)
	return st
}

// Through the host: the bar shows every phase of a run in FidoSubagent,
// keeps the final outcome, and goes when the parent turn advances.
func TestHostSubagentBar(t *testing.T) {
	t.Parallel()
	s := startSession(t, nil)
	n := s.n
	n.Lua(t, nil, `vim.o.columns = 200; vim.o.lines = 40; require("fido.layout").open(true)`)
	ui := s.backend.ui
	var cur int
	n.Lua(t, &cur, `return vim.api.nvim_get_current_win()`)

	run := []agent.SubagentStatus{
		{AgentID: "sub-5e6f7a8b9c", Phase: "starting"},
		{AgentID: "sub-5e6f7a8b9c", Phase: "reasoning", Elapsed: 800 * time.Millisecond},
		{AgentID: "sub-5e6f7a8b9c", Phase: "read_file", Detail: "nvim/ui.go", Elapsed: 2 * time.Second},
		{AgentID: "sub-5e6f7a8b9c", Phase: "completed", Detail: "2 findings", Elapsed: 5 * time.Second, Done: true},
	}
	for i := range run {
		ui.Subagent(&run[i])
		text := ActivityView(&run[i]).Text
		n.Lua(t, nil, `_G.fido_test_want = ...`, text)
		n.WaitFor(t, `(function(want)
  local tw = require("fido.layout").transcript_win()
  if require("fido.activity").uses_winbar() then
    local wb = vim.wo[tw].winbar
    return vim.api.nvim_eval_statusline(wb, { winid = tw, use_winbar = true }).str:find(want, 1, true) ~= nil
  end
  local f = require("fido.activity").float()
  return f ~= nil and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(f), 0, 1, false)[1] == " " .. want
end)(_G.fido_test_want)`, 5*time.Second)
		st := readBarState(t, n)
		assertBarShows(t, st, text)
		assert.Equal(t, cur, st.Current, "focus never moves")
		assert.True(t, n.Bool(t, `require("fido").status().subagent.phase == ...`, run[i].Phase))
	}
	ui.Subagent(nil)
	n.WaitFor(t, `require("fido").status().subagent == nil`, 5*time.Second)
	n.WaitFor(t, `require("fido.activity").float() == nil and (not require("fido.activity").uses_winbar()
  or vim.wo[require("fido.layout").transcript_win()].winbar == "")`, 5*time.Second)
}
