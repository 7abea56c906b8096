package nvim

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/nvim/nvimtest"
	"github.com/fido-nvim/fido/tools"
)

func TestMain(m *testing.M) { nvimtest.Main(m) }

// fakeBackend scripts what a session would do; it records the calls.
type fakeBackend struct {
	ui     *UI
	editor tools.Editor

	mu       sync.Mutex
	submits  []string
	plans    []string
	cancels  int
	closed   bool
	onSubmit func(ui *UI, text string)
}

func (f *fakeBackend) Submit(text string) {
	f.mu.Lock()
	f.submits = append(f.submits, text)
	on := f.onSubmit
	f.mu.Unlock()
	if on != nil {
		on(f.ui, text)
	}
}

func (f *fakeBackend) Cancel() {
	f.mu.Lock()
	f.cancels++
	last := ""
	if len(f.submits) > 0 {
		last = f.submits[len(f.submits)-1]
	}
	f.mu.Unlock()
	f.ui.Notice("cancelled")
	f.ui.RestoreDraft(last)
	f.ui.SetState(agent.StateIdle)
}

func (f *fakeBackend) Plan(arg string) {
	f.mu.Lock()
	f.plans = append(f.plans, arg)
	f.mu.Unlock()
}

func (f *fakeBackend) Review(agent.ReviewRequest) {}

func (f *fakeBackend) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

func (f *fakeBackend) snapshot() (submits, plans []string, cancels int, closed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.submits...), append([]string(nil), f.plans...), f.cancels, f.closed
}

type session struct {
	n       *nvimtest.Nvim
	backend *fakeBackend
	done    chan error
}

// startSession runs the host in-process against a headless Neovim (over its
// listen socket) with a scripted backend.
func startSession(t *testing.T, onSubmit func(ui *UI, text string)) *session {
	t.Helper()
	n := nvimtest.Start(t, nvimtest.Options{Listen: true})
	conn, err := net.Dial("unix", n.Addr)
	require.NoError(t, err)
	s := &session{n: n, backend: &fakeBackend{onSubmit: onSubmit}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.done <- Run(ctx, RunConfig{In: conn, Out: conn, Logf: t.Logf,
			NewBackend: func(ui *UI, ed tools.Editor) (Backend, error) {
				s.backend.mu.Lock()
				s.backend.ui, s.backend.editor = ui, ed
				s.backend.mu.Unlock()
				return s.backend, nil
			}})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(2 * time.Second):
			t.Error("Run did not return after cancel")
		}
		conn.Close()
	})
	n.WaitFor(t, `require("fido.host").ready()`, 5*time.Second)
	// Lua is ready at the handshake, just before the host makes its backend:
	// wait for that too (under the lock, so later reads see ui).
	require.Eventually(t, func() bool {
		s.backend.mu.Lock()
		defer s.backend.mu.Unlock()
		return s.backend.ui != nil
	}, 5*time.Second, 5*time.Millisecond)
	return s
}

func TestLayoutOpensTranscriptAndInput(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	n.Lua(t, nil, `vim.o.columns = 200; vim.o.lines = 50`)
	require.NoError(t, n.Command("Fido"))
	var info map[string]any
	n.Lua(t, &info, `
local l = require("fido.layout")
local tw, iw = l.transcript_win(), l.input_win()
local tb, ib = vim.api.nvim_win_get_buf(tw), vim.api.nvim_win_get_buf(iw)
return {
  tname = vim.api.nvim_buf_get_name(tb), iname = vim.api.nvim_buf_get_name(ib),
  ft = vim.bo[tb].filetype, bt = vim.bo[tb].buftype, modifiable = vim.bo[tb].modifiable,
  ibt = vim.bo[ib].buftype,
  width = vim.api.nvim_win_get_width(tw), wrap = vim.wo[tw].wrap,
  stl = vim.wo[tw].statusline, current_is_input = vim.api.nvim_get_current_win() == iw,
  input_below = vim.fn.win_screenpos(iw)[1] > vim.fn.win_screenpos(tw)[1],
  right = vim.fn.win_screenpos(tw)[2] > 1,
  nwins = #vim.api.nvim_tabpage_list_wins(0),
}`)
	assert.Equal(t, "fido://transcript", info["tname"])
	assert.Equal(t, "fido://input", info["iname"])
	assert.Equal(t, "fido", info["ft"])
	assert.Equal(t, "nofile", info["bt"])
	assert.Equal(t, "nofile", info["ibt"])
	assert.Equal(t, false, info["modifiable"])
	assert.EqualValues(t, 80, info["width"], "40 %% of 200 columns")
	assert.Equal(t, true, info["wrap"])
	assert.Equal(t, "%!v:lua.require'fido'.statusline()", info["stl"])
	assert.Equal(t, true, info["current_is_input"])
	assert.Equal(t, true, info["input_below"])
	assert.Equal(t, true, info["right"])
	assert.EqualValues(t, 3, info["nwins"])

	// A second :Fido focuses, it does not open more windows.
	require.NoError(t, n.Command("wincmd t"))
	require.NoError(t, n.Command("Fido"))
	assert.True(t, n.Bool(t, `#vim.api.nvim_tabpage_list_wins(0) == 3 and vim.api.nvim_get_current_win() == require("fido.layout").input_win()`))
}

func TestSubmitStreamsIntoTranscriptAndStatus(t *testing.T) {
	s := startSession(t, func(ui *UI, text string) {
		ui.Info(agent.SessionInfo{Model: "test/model", Reasoning: "low"})
		ui.UserText(text)
		ui.SetState(agent.StateThinking)
		for i := 0; i < 200; i++ {
			ui.Reasoning("r")
		}
		ui.ToolCall(agent.ToolCallInfo{ID: "c1", Name: "read_file", Summary: "main.go 1–40"})
		ui.ToolResult(agent.ToolResultInfo{ID: "c1", Name: "read_file", Summary: "40 lines"})
		ui.SetState(agent.StateStreaming)
		for _, d := range []string{"It ", "prints\n", "hello."} {
			ui.Content(d)
		}
		ui.Error("401 Unauthorized: check OPENROUTER_API_KEY")
		ui.Usage(agent.Usage{Calls: 2, Input: 1200, Output: 34, CacheRead: 1000, Cost: 0.0123},
			agent.Usage{Calls: 1, Input: 100, Output: 4, Cost: 0.001})
		ui.SetState(agent.StateIdle)
	})
	n := s.n
	require.NoError(t, n.Command("Fido explain main.go"))
	n.WaitFor(t, `require("fido").status().state == "idle" and require("fido").status().usage.calls == 2`, 5*time.Second,
		`require("fido").status()`)
	submits, _, _, _ := s.backend.snapshot()
	assert.Equal(t, []string{"explain main.go"}, submits)

	lines := n.Lines(t, "fido://transcript")
	reasoning := ""
	for i := 0; i < 200; i++ {
		reasoning += "r"
	}
	assert.Equal(t, []string{"## You", "explain main.go", "", "## Fido", reasoning,
		"● read_file main.go 1–40 … ✓ 40 lines", "It prints", "hello.",
		"✗ 401 Unauthorized: check OPENROUTER_API_KEY"}, lines)

	var groups []string
	n.Lua(t, &groups, `local b = vim.fn.bufnr("fido://transcript")
local out = {}
for i = 0, vim.api.nvim_buf_line_count(b) - 1 do
  local m = vim.api.nvim_buf_get_extmarks(b, require("fido.bridge").ns, {i, 0}, {i, -1}, { details = true })
  out[#out + 1] = m[1] and m[1][4].hl_group or ""
end
return out`)
	assert.Equal(t, []string{"FidoUser", "FidoUser", "", "FidoHeader", "FidoReasoning", "FidoTool", "", "", "FidoError"}, groups)

	var st struct {
		State         string      `msgpack:"state"`
		Model         string      `msgpack:"model"`
		Reasoning     string      `msgpack:"reasoning"`
		Usage         UsageStatus `msgpack:"usage"`
		Sub           UsageStatus `msgpack:"sub"`
		PlanIsNil     bool        `msgpack:"plan_is_nil"`
		SubagentIsNil bool        `msgpack:"subagent_is_nil"`
		Flushes       int         `msgpack:"flushes"`
	}
	n.Lua(t, &st, `local s = require("fido").status()
return { state = s.state, model = s.model, reasoning = s.reasoning, usage = s.usage, sub = s.subagent_usage,
  plan_is_nil = s.plan == nil, subagent_is_nil = s.subagent == nil, flushes = s.flushes }`)
	assert.Equal(t, "idle", st.State)
	assert.Equal(t, "test/model", st.Model)
	assert.Equal(t, "low", st.Reasoning)
	assert.Equal(t, UsageStatus{Calls: 2, Input: 1200, Output: 34, CacheRead: 1000, Cost: 0.0123}, st.Usage)
	assert.Equal(t, UsageStatus{Calls: 1, Input: 100, Output: 4, Cost: 0.001}, st.Sub)
	assert.True(t, st.PlanIsNil)
	assert.True(t, st.SubagentIsNil)
	// Coalesced: far fewer flushes than the 210 UI calls.
	assert.Less(t, st.Flushes, 20)

	var stl string
	n.Lua(t, &stl, `return vim.api.nvim_eval_statusline(require("fido").statusline(), { winid = require("fido.layout").transcript_win(), maxwidth = 200 }).str`)
	for _, want := range []string{"test/model", "low", "idle", "2 calls", "in 1.2k", "out 34", "cache 1.0k", "$0.0123"} {
		assert.Contains(t, stl, want)
	}
}

func TestCancelRestoresDraftAndReturnsToIdle(t *testing.T) {
	s := startSession(t, func(ui *UI, text string) {
		ui.UserText(text)
		ui.SetState(agent.StateConnecting)
	})
	n := s.n
	require.NoError(t, n.Command("Fido"))
	n.Lua(t, nil, `vim.api.nvim_buf_set_lines(vim.fn.bufnr("fido://input"), 0, -1, false, { "first line", "second" })`)
	// <CR> in the input (normal mode) submits and clears it.
	n.Lua(t, nil, `vim.api.nvim_set_current_win(require("fido.layout").input_win()); vim.cmd("stopinsert")`)
	_, err := n.Input("<CR>")
	require.NoError(t, err)
	n.WaitFor(t, `require("fido").status().state == "connecting"`, 5*time.Second, `require("fido").status()`)
	assert.Equal(t, []string{""}, n.Lines(t, "fido://input"))

	_, err = n.Input("<C-c>")
	require.NoError(t, err)
	n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second, `require("fido").status()`)
	n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[2] == "second"`, 5*time.Second)
	assert.Equal(t, []string{"first line", "second"}, n.Lines(t, "fido://input"))
	submits, _, cancels, _ := s.backend.snapshot()
	assert.Equal(t, []string{"first line\nsecond"}, submits)
	assert.Equal(t, 1, cancels)

	require.NoError(t, n.Command("FidoCancel"))
	require.Eventually(t, func() bool { _, _, c, _ := s.backend.snapshot(); return c == 2 }, 5*time.Second, 10*time.Millisecond)
}

func TestPlanCommandReachesBackend(t *testing.T) {
	s := startSession(t, nil)
	require.NoError(t, s.n.Command("FidoPlan"))
	require.NoError(t, s.n.Command("FidoPlan clear"))
	require.Eventually(t, func() bool { _, p, _, _ := s.backend.snapshot(); return len(p) == 2 }, 5*time.Second, 10*time.Millisecond)
	_, plans, _, _ := s.backend.snapshot()
	assert.Equal(t, []string{"", "clear"}, plans)
}

func TestTranscriptFollowsTailOnlyAtTheEnd(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	require.NoError(t, n.Command("Fido"))
	ui := s.backend.ui
	for i := 0; i < 50; i++ {
		ui.Notice(fmt.Sprintf("n%d", i))
	}
	n.WaitFor(t, `vim.api.nvim_buf_line_count(vim.fn.bufnr("fido://transcript")) == 50`, 5*time.Second)
	assert.True(t, n.Bool(t, `vim.api.nvim_win_get_cursor(require("fido.layout").transcript_win())[1] == 50`), "follows while at the end")

	n.Lua(t, nil, `vim.api.nvim_win_set_cursor(require("fido.layout").transcript_win(), { 10, 0 })`)
	ui.Notice("more")
	n.WaitFor(t, `vim.api.nvim_buf_line_count(vim.fn.bufnr("fido://transcript")) == 51`, 5*time.Second)
	assert.True(t, n.Bool(t, `vim.api.nvim_win_get_cursor(require("fido.layout").transcript_win())[1] == 10`), "stays where the user is")

	n.Lua(t, nil, `vim.api.nvim_win_set_cursor(require("fido.layout").transcript_win(), { 51, 0 })`)
	ui.Content("tail") // "", "## Fido", "tail"
	n.WaitFor(t, `vim.api.nvim_buf_line_count(vim.fn.bufnr("fido://transcript")) == 54`, 5*time.Second)
	assert.True(t, n.Bool(t, `vim.api.nvim_win_get_cursor(require("fido.layout").transcript_win())[1] == 54`), "follows again")
}

// A streamed line taller than the window grows by appends (each flush sends
// only what is new), keeps its highlight over its whole length, and the
// window following it shows its newest text, not its start.
func TestTranscriptFollowsTheTailOfALongLine(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	require.NoError(t, n.Command("Fido"))
	n.Lua(t, nil, `local b = require("fido.bridge")
local apply = b.apply
_G.appends, _G.biggest = 0, 0
b.apply = function(batch)
  local tr = batch.transcript
  if tr and tr ~= vim.NIL then
    if tr.append and tr.append ~= vim.NIL then _G.appends = _G.appends + 1 end
    for _, l in ipairs(tr.lines ~= vim.NIL and tr.lines or {}) do _G.biggest = math.max(_G.biggest, #l) end
  end
  return apply(batch)
end`)
	ui := s.backend.ui
	var want strings.Builder
	for i := 0; i < 400; i++ {
		piece := fmt.Sprintf("reason%03d ", i)
		want.WriteString(piece)
		ui.Reasoning(piece)
		if i%50 == 49 {
			n.WaitFor(t, fmt.Sprintf(`(function()
  local ls = vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)
  return #ls[#ls] == %d
end)()`, want.Len()), 5*time.Second)
		}
	}
	var got struct {
		Line    string `msgpack:"line"`
		EndCol  int    `msgpack:"end_col"`
		Group   string `msgpack:"group"`
		Marks   int    `msgpack:"marks"`
		Row     int    `msgpack:"row"`
		Col     int    `msgpack:"col"`
		Last    int    `msgpack:"last"`
		Skip    int    `msgpack:"skip"`
		Area    int    `msgpack:"area"`
		Appends int    `msgpack:"appends"`
		Biggest int    `msgpack:"biggest"`
	}
	n.Lua(t, &got, `local b = vim.fn.bufnr("fido://transcript")
local w = require("fido.layout").transcript_win()
local ls = vim.api.nvim_buf_get_lines(b, 0, -1, false)
local ns = require("fido.bridge").ns
local marks = vim.api.nvim_buf_get_extmarks(b, ns, { #ls - 1, 0 }, { #ls - 1, -1 }, { details = true })
local m = marks[#marks] or { 0, 0, 0, {} }
local cur = vim.api.nvim_win_get_cursor(w)
return { line = ls[#ls], end_col = m[4].end_col or -1, group = m[4].hl_group or "", marks = #marks,
  row = cur[1], col = cur[2], last = #ls, skip = vim.api.nvim_win_call(w, vim.fn.winsaveview).skipcol or -1,
  area = vim.api.nvim_win_get_height(w) * vim.api.nvim_win_get_width(w), appends = _G.appends, biggest = _G.biggest }`)
	assert.Equal(t, want.String(), got.Line)
	assert.Equal(t, 1, got.Marks, "one highlight on the line")
	assert.Equal(t, len(got.Line), got.EndCol, "the highlight covers the whole line")
	assert.Equal(t, "FidoReasoning", got.Group)
	assert.GreaterOrEqual(t, got.Appends, 7, "each flush after the first appended")
	assert.Less(t, got.Biggest, 1000, "no flush resent the whole line")
	require.Greater(t, len(got.Line), got.Area, "the line is taller than the window")
	assert.Equal(t, got.Last, got.Row, "the cursor follows the last line")
	assert.Equal(t, len(got.Line)-1, got.Col, "at its end")
	assert.Positive(t, got.Skip, "the window shows the line's newest text, not its start")
}

// The transcript buffer wiped (:bwipe, a bufferline's close button),
// unloaded (:bdelete) or edited by hand comes back whole with the next
// flush, streaming goes on into it, and the batch's status still applies.
func TestTranscriptBufferWipedComesBackWhole(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	require.NoError(t, n.Command("Fido"))
	ui := s.backend.ui
	transcript := func() []string { return n.Lines(t, "fido://transcript") }
	ui.Notice("first")
	ui.UserText("question")
	ui.Content("streamed")
	n.WaitFor(t, `vim.tbl_contains(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "streamed")`, 5*time.Second)
	want := transcript()

	for i, how := range []string{
		`vim.cmd("bwipe! " .. vim.fn.bufnr("fido://transcript"))`,
		`vim.cmd("bdelete! " .. vim.fn.bufnr("fido://transcript"))`,
		`local b = vim.fn.bufnr("fido://transcript")
vim.bo[b].modifiable = true
vim.api.nvim_buf_set_lines(b, 0, 1, false, {})
vim.bo[b].modifiable = false`,
	} {
		n.Lua(t, nil, how)
		more := fmt.Sprintf(" more%d", i)
		ui.Content(more)
		want[len(want)-1] += more
		ui.Info(agent.SessionInfo{Model: fmt.Sprintf("model/%d", i)})
		n.WaitFor(t, fmt.Sprintf(`require("fido").status().model == "model/%d"`, i), 5*time.Second, `require("fido").status()`)
		n.WaitFor(t, fmt.Sprintf(`(function()
  local b = vim.fn.bufnr("fido://transcript")
  if b < 0 or not vim.api.nvim_buf_is_loaded(b) then return false end
  local ls = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  return ls[#ls] == %q
end)()`, want[len(want)-1]), 5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
		assert.Equal(t, want, transcript(), "after %s", how)
	}
	require.NoError(t, n.Command("Fido"))
	assert.Equal(t, want, transcript(), ":Fido shows it")
}

func TestTranscriptKeepsNewestThousandEntriesInBuffer(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	ui := s.backend.ui
	for i := 0; i < 1200; i++ {
		ui.Notice(fmt.Sprintf("entry %d", i))
	}
	n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), -2, -1, false)[1] == "entry 1199"`, 5*time.Second)
	lines := n.Lines(t, "fido://transcript")
	require.Len(t, lines, 1000)
	assert.Equal(t, "entry 200", lines[0])
	var marks int
	n.Lua(t, &marks, `return #vim.api.nvim_buf_get_extmarks(vim.fn.bufnr("fido://transcript"), require("fido.bridge").ns, 0, -1, {})`)
	assert.Equal(t, 1000, marks, "one highlight per kept line, none left over from trimmed ones")
}

// The buffers only Fido writes keep no undo history: Neovim would hold every
// line the API ever replaced or trimmed in one undo block that never closes
// (50 MB after 50 MB of lines passed through a buffer), however few the
// transcript keeps.
func TestFidoBuffersKeepNoUndoHistory(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	require.NoError(t, n.Command("Fido"))
	ui := s.backend.ui
	for i := 0; i < 1100; i++ {
		ui.Notice(fmt.Sprintf("entry %d %s", i, strings.Repeat("x", 200)))
	}
	ui.Plan(samplePlan())
	ui.ShowPlan(false)
	n.WaitFor(t, `vim.api.nvim_buf_line_count(vim.fn.bufnr("fido://transcript")) == 1000`, 5*time.Second)
	n.WaitFor(t, `vim.fn.bufnr("fido://plan") > 0 and vim.api.nvim_buf_line_count(vim.fn.bufnr("fido://plan")) > 3`, 5*time.Second)
	for _, name := range []string{"fido://transcript", "fido://plan"} {
		var entries int
		n.Lua(t, &entries, `local u = vim.api.nvim_buf_call(vim.fn.bufnr(...), vim.fn.undotree)
return #u.entries + u.seq_last`, name)
		assert.Zero(t, entries, "%s keeps no undo history", name)
	}
	var inputLevels int
	n.Lua(t, &inputLevels, `return vim.api.nvim_buf_call(vim.fn.bufnr("fido://input"), function() return vim.o.undolevels end)`)
	assert.Positive(t, inputLevels, "the input, which the user edits, keeps its undo")
}

func TestSelectAndInputGoThroughVimUI(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	n.Lua(t, nil, `
vim.ui.select = function(items, opts, cb) vim.g.sel_prompt = opts.prompt; cb(items[2], 2) end
vim.ui.input = function(opts, cb) vim.g.input_default = opts.default; cb("typed") end`)
	ui := s.backend.ui
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	idx, err := ui.Select(ctx, "Run `rm -rf x`?", []string{"Run once", "Always this session", "Deny"})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	text, ok, err := ui.Input(ctx, "Answer:", "def")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "typed", text)
	var g map[string]string
	n.Lua(t, &g, `return { p = vim.g.sel_prompt, d = vim.g.input_default }`)
	assert.Equal(t, map[string]string{"p": "Run `rm -rf x`?", "d": "def"}, g)

	// Dismissed, then a picker that never answers: ctx ends the wait.
	n.Lua(t, nil, `vim.ui.select = function(items, opts, cb) cb(nil, nil) end`)
	idx, err = ui.Select(ctx, "p", []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, -1, idx)
	n.Lua(t, nil, `vim.ui.select = function() end`)
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	_, err = ui.Select(short, "p", []string{"a"})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestEditorModifiedAndReload(t *testing.T) {
	s := startSession(t, nil)
	n := s.n
	path := filepath.Join(n.Dir, "a.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\n"), 0o644))
	other := filepath.Join(n.Dir, "b.txt")
	require.NoError(t, os.WriteFile(other, []byte("b\n"), 0o644))
	require.NoError(t, n.Command("edit "+path))
	require.NoError(t, n.Command("badd "+other))
	ctx := context.Background()
	ed := s.backend.editor

	mod, err := ed.Modified(ctx, path)
	require.NoError(t, err)
	assert.False(t, mod)
	n.Lua(t, nil, `vim.api.nvim_buf_set_lines(0, 0, -1, false, { "unsaved" })`)
	mod, err = ed.Modified(ctx, path)
	require.NoError(t, err)
	assert.True(t, mod)
	mod, err = ed.Modified(ctx, filepath.Join(n.Dir, "not-open.txt"))
	require.NoError(t, err)
	assert.False(t, mod)

	// Saved again, changed on disk, reloaded.
	require.NoError(t, n.Command("silent write"))
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, os.WriteFile(path, []byte("two\nthree\n"), 0o644))
	future := time.Now().Add(2 * time.Second)
	require.NoError(t, os.Chtimes(path, future, future))
	ed.Reload(ctx, []string{path})
	n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)[1] == "two"`, 5*time.Second)
	assert.Equal(t, []string{"two", "three"}, n.Lines(t, path))
}

func TestRunReturnsWhenNeovimCloses(t *testing.T) {
	s := startSession(t, nil)
	start := time.Now()
	n := s.n
	n.Lua(t, nil, `vim.fn.chanclose(require("fido.host").chan())`)
	select {
	case err := <-s.done:
		assert.NoError(t, err)
		assert.Less(t, time.Since(start), time.Second)
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after its channel closed")
	}
	_, _, _, closed := s.backend.snapshot()
	assert.True(t, closed)
	s.done <- nil // for the cleanup
}
