package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
	"github.com/fido-nvim/fido/tools/js"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/shell"
)

// These tests drive the real bin/fido from a real headless Neovim against the
// fake provider, across features: tools and buffers, the plan window and its
// restore, delegation and the subagent bar, /quit.

// TestMain makes this test binary answer the js-worker subcommand as bin/fido
// does: a backend built in-process (the catalog tests) prewarms a JavaScript
// worker, which is this executable with that argument. Without this the
// worker ran the whole suite, whose backends started workers of their own:
// thousands of processes within minutes.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == js.WorkerCommand {
		os.Exit(js.RunWorker(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == shell.GuardCommand {
		os.Exit(shell.RunGuard(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.RunHelper(os.Args[2:]))
	}
	nvimtest.Main(m)
}

type fido struct {
	*nvimtest.Nvim
	srv *llmtest.Server
}

// startFido starts Neovim with the real host against a fresh fake provider.
// stateDir and workspace may be shared between two Neovims (a restart).
func startFido(t *testing.T, stateDir string, workspace ...string) *fido {
	t.Helper()
	return startFidoEnv(t, stateDir, nil, workspace...)
}

// startFidoEnv is startFido with extra environment variables; they come
// last, so FIDO_MODEL=… there replaces the default test/model.
func startFidoEnv(t *testing.T, stateDir string, extra []string, workspace ...string) *fido {
	t.Helper()
	srv := llmtest.NewServer(t)
	env := append([]string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=test-key", "FIDO_MODEL=test/model"}, extra...)
	opts := nvimtest.Options{Fido: true, Env: env}
	if len(workspace) > 0 {
		opts.Dir = workspace[0]
	}
	n := nvimtest.Start(t, opts)
	if stateDir != "" {
		n.Lua(t, nil, `vim.env.FIDO_STATE_DIR = ...`, stateDir)
		n.StateDir = stateDir
	}
	n.Lua(t, nil, `_G.fido_notes = {}
vim.notify = function(msg, level) table.insert(_G.fido_notes, { msg = msg, level = level }) end`)
	scriptQuestions(t, n)
	return &fido{Nvim: n, srv: srv}
}

// scriptQuestions sends every question to vim.ui.select (questions.ui =
// "select"), whatever setup() a test calls later: these tests script their
// answers there. Fido's own question window is tested in nvim/.
func scriptQuestions(t *testing.T, n *nvimtest.Nvim) {
	t.Helper()
	n.Lua(t, nil, `local config = require("fido.config")
if not config.scripted then
  config.scripted = true
  local set = config.set
  config.set = function(opts)
    if type(opts) == "table" then
      opts = vim.tbl_deep_extend("keep", opts, { questions = { ui = "select" } })
    end
    return set(opts)
  end
end
config.values.questions = vim.tbl_extend("force", config.values.questions or {}, { ui = "select" })`)
}

// waitTranscript waits until the transcript holds text, and shows the
// transcript when it does not in time. Extra arguments of f.WaitFor (Lua
// expressions to show) follow the timeout.
func (f *fido) waitTranscript(t *testing.T, text string, timeout time.Duration, show ...string) {
	t.Helper()
	expr := fmt.Sprintf(`vim.fn.join(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find([==[%s]==], 1, true) ~= nil`, text)
	f.WaitFor(t, expr, timeout, append(show, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)...)
}

func (f *fido) transcript(t *testing.T) string {
	return strings.Join(f.Lines(t, "fido://transcript"), "\n")
}

func (f *fido) waitIdleAfter(t *testing.T, calls int) {
	t.Helper()
	f.WaitFor(t, `require("fido").status().usage.calls >= `+strconv.Itoa(calls)+` and require("fido").status().state == "idle"`,
		15*time.Second, `require("fido").status()`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
}

// A patch never overwrites a buffer with unsaved changes; once saved, the
// patch applies and the open buffer shows the new content.
func TestE2EPatchRespectsUnsavedBufferAndReloads(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644))
	require.NoError(t, f.Command("edit "+path))
	require.NoError(t, f.Command("normal! Gounsaved line"))
	patch := `{"operations":[{"path":"notes.txt","search":"beta","replace":"gamma"}]}`
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_1", "patch", patch, 2).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("I could not change it."),
	)
	require.NoError(t, f.Command("Fido change beta to gamma in notes.txt"))
	f.waitIdleAfter(t, 2)
	disk, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "alpha\nbeta\n", string(disk), "nothing written over unsaved changes")
	text := f.transcript(t)
	assert.Contains(t, text, "notes.txt")
	assert.Contains(t, text, "unsaved")
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[1].Get("messages.@reverse.0.content").String(), "unsaved", "the model is told why")

	// Save, then the same patch applies and the buffer reloads at once (even
	// within the second of the :write) with the cursor where it was.
	require.NoError(t, f.Command("write"))
	require.NoError(t, f.Command("call cursor(3, 2)"))
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_2", "patch", patch, 1).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("Done."),
	)
	require.NoError(t, f.Command("Fido try again"))
	f.waitIdleAfter(t, 4)
	disk, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "alpha\ngamma\nunsaved line\n", string(disk))
	buf := fmt.Sprintf("vim.fn.bufnr(%q)", path)
	f.WaitFor(t, `vim.fn.getbufline(`+buf+`, 2)[1] == "gamma"`, 5*time.Second, `vim.fn.getbufline(`+buf+`, 1, "$")`, `vim.api.nvim_exec("messages", true)`, `vim.fn.getbufvar(`+buf+`, "&modified")`)
	assert.True(t, f.Bool(t, `vim.fn.line(".") == 3 and vim.fn.col(".") == 2`), "cursor kept")
}

// /quit closes Fido's windows without losing the conversation.
func TestE2EQuitClosesWindows(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido.layout").transcript_win() ~= nil`, 5*time.Second)
	require.NoError(t, f.Command("Fido /quit"))
	f.WaitFor(t, `require("fido.layout").transcript_win() == nil and require("fido.layout").input_win() == nil`, 5*time.Second)
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido.layout").transcript_win() ~= nil`, 5*time.Second)
}

// Fido sets its window options locally: the transcript's statusline shows the
// totals, and another buffer shown in a window split from it does not (it
// would if Fido set the global 'statusline').
func TestE2ETranscriptStatuslineIsLocal(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido.layout").transcript_win() ~= nil`, 5*time.Second)
	var shown []string
	f.Lua(t, &shown, `
		local tw = require("fido.layout").transcript_win()
		vim.o.columns = 300
		vim.api.nvim_win_set_width(tw, 200) -- wide enough for every segment
		vim.api.nvim_set_current_win(tw)
		vim.cmd("split")
		vim.cmd("enew")
		vim.api.nvim_buf_set_name(0, "scratch.txt")
		local other = vim.api.nvim_get_current_win()
		local function eval(w)
			local s = vim.wo[w].statusline
			return vim.api.nvim_eval_statusline(s, { winid = w, maxwidth = 300 }).str
		end
		return { eval(other), eval(tw) }`)
	assert.NotContains(t, shown[0], "calls", "another buffer in a split keeps the user's statusline")
	assert.Contains(t, shown[1], "calls")
}

// Without a key, :Fido says in one line how to set it, and a prompt is not lost.
func TestE2EMissingKeyIsExplained(t *testing.T) {
	srv := llmtest.NewServer(t)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL()}})
	require.NoError(t, n.Command("Fido"))
	n.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("OPENROUTER_API_KEY is not set", 1, true) ~= nil`,
		10*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	require.NoError(t, n.Command("Fido hello there"))
	n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "hello there"`, 5*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	assert.Empty(t, srv.Requests(), "no request without a key")
}

const planArgs = `{"reason":"fix the lexer","items":[` +
	`{"id":"inspect","title":"Read the lexer","status":"done","evidence":["lexer.go:42"]},` +
	`{"id":"impl","title":"Fix tokenizing","status":"in_progress","details":"handle CRLF line endings","dependencies":["inspect"],"next_action":"patch lexer.go"},` +
	`{"id":"verify","title":"Run the tests","status":"pending","dependencies":["impl"],"next_action":"go test ./..."}]}`

func (f *fido) makePlan(t *testing.T) {
	t.Helper()
	f.srv.Enqueue(
		llmtest.Reply().Reasoning("a plan helps").ToolCall("call_plan", "update_plan", planArgs, 4).Finish("tool_calls").Usage(100, 20, 0, 0.001),
		llmtest.Text("Planned."),
	)
	require.NoError(t, f.Command("Fido fix the lexer"))
	f.waitIdleAfter(t, 2)
}

func (f *fido) planLines(t *testing.T) string {
	return strings.Join(f.Lines(t, "fido://plan"), "\n")
}

// update_plan from the model shows the right-anchored float with every item
// and field, status().plan holds the same normalized plan, the transcript has
// one line for it; :FidoPlan clear clears memory, disk and window without a
// model turn, and the next request carries the cleared state.
func TestE2EPlanWindowAndClear(t *testing.T) {
	f := startFido(t, filepath.Join(t.TempDir(), "state"))
	require.NoError(t, f.Command("set columns=160 lines=50"))
	f.makePlan(t)

	f.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)
	var cfg struct {
		Relative  string `msgpack:"relative"`
		Anchor    string `msgpack:"anchor"`
		Focusable bool   `msgpack:"focusable"`
		Col       any    `msgpack:"col"`
	}
	f.Lua(t, &cfg, `return vim.api.nvim_win_get_config(require("fido.planwin").win())`)
	assert.Equal(t, "editor", cfg.Relative)
	assert.Equal(t, "NE", cfg.Anchor)
	assert.False(t, cfg.Focusable)
	assert.EqualValues(t, 160, toInt(cfg.Col), "at the right edge")
	text := f.planLines(t)
	for _, want := range []string{"1/3 done", "inspect", "Read the lexer", "lexer.go:42", "impl", "Fix tokenizing",
		"handle CRLF line endings", "patch lexer.go", "verify", "Run the tests", "go test ./...", "in_progress", "pending", "done"} {
		assert.Contains(t, text, want)
	}
	assert.True(t, f.Bool(t, `require("fido").status().plan.version == 1 and require("fido").status().plan.items[2].next_action == "patch lexer.go"`))
	tr := f.transcript(t)
	assert.Contains(t, tr, "plan v1: 1/3 done")
	assert.NotContains(t, tr, "handle CRLF line endings", "never the full plan in the transcript")
	var planFiles []string
	require.NoError(t, filepath.Walk(f.StateDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "plan.json" {
			planFiles = append(planFiles, p)
		}
		return nil
	}))
	require.Len(t, planFiles, 1)
	onDisk, err := os.ReadFile(planFiles[0])
	require.NoError(t, err)
	assert.Contains(t, string(onDisk), "handle CRLF line endings")

	// :FidoPlan focuses it; q hides it; :FidoPlan shows it again.
	require.NoError(t, f.Command("FidoPlan"))
	f.WaitFor(t, `vim.api.nvim_get_current_win() == require("fido.planwin").win()`, 5*time.Second)
	require.NoError(t, f.Command("normal q"))
	f.WaitFor(t, `require("fido.planwin").win() == nil`, 5*time.Second)
	require.NoError(t, f.Command("Fido /plan"))
	f.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)

	before := len(f.srv.Requests())
	require.NoError(t, f.Command("FidoPlan clear"))
	f.WaitFor(t, `require("fido").status().plan == nil`, 5*time.Second, `require("fido").status().plan`)
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://plan"), 0, -1, false), "\n"):find("No plan", 1, true) ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://plan"), 0, -1, false)`)
	assert.Len(t, f.srv.Requests(), before, "clearing spends no model turn")
	onDisk, err = os.ReadFile(planFiles[0])
	require.NoError(t, err)
	assert.NotContains(t, string(onDisk), "handle CRLF line endings")

	f.srv.Enqueue(llmtest.Text("Starting over."))
	require.NoError(t, f.Command("Fido what now?"))
	f.waitIdleAfter(t, 3)
	last := f.srv.Requests()[before]
	msgs := last.Get("messages").Array()
	cleared := msgs[len(msgs)-2]
	assert.Equal(t, "tool", cleared.Get("role").String())
	assert.Contains(t, cleared.Get("content").String(), `"items":[]`)
	assert.Contains(t, cleared.Get("content").String(), "plan cleared by the user")
	assert.Equal(t, "user", msgs[len(msgs)-1].Get("role").String())
}

// After a restart the saved plan shows by itself and the first request
// carries it as an update_plan call and result right after messages[0].
func TestE2EPlanRestoredAfterRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	f1 := startFido(t, state, ws)
	f1.makePlan(t)
	system := f1.srv.Requests()[0].Get("messages.0").Raw
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))

	f2 := startFido(t, state, ws)
	require.NoError(t, f2.Command("Fido"))
	f2.WaitFor(t, `require("fido.planwin").win() ~= nil and require("fido").status().plan ~= nil`, 10*time.Second,
		`require("fido").status()`)
	assert.Contains(t, f2.planLines(t), "handle CRLF line endings")
	f2.srv.Enqueue(llmtest.Text("We were fixing the lexer."))
	require.NoError(t, f2.Command("Fido where were we?"))
	f2.waitIdleAfter(t, 1)
	r := f2.srv.Requests()[0]
	assert.Equal(t, system, r.Get("messages.0").Raw, "the system message is the same and holds no plan")
	assert.NotContains(t, r.Get("messages.0.content").String(), "handle CRLF")
	assert.Equal(t, "update_plan", r.Get("messages.1.tool_calls.0.function.name").String())
	content := r.Get("messages.2.content").String()
	for _, want := range []string{`"version":1`, `"updatedAt"`, `"reason":"fix the lexer"`, "lexer.go:42", "handle CRLF line endings", `"next_action":"go test ./..."`} {
		assert.Contains(t, content, want)
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	case int:
		return int64(x)
	}
	return -1
}

// The model delegates; the subagent reads a file and answers. While it runs,
// the transcript window shows the subagent bar in FidoSubagent (winbar where
// Neovim has it, a pinned float on 0.7); afterwards the bar shows the outcome,
// the parent gets only the delegate_result, and nothing of the subagent's
// private messages reaches the transcript or the parent.
func TestE2EDelegateShowsSubagentBar(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, f.Command("set columns=160 lines=50"))
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "lexer.go"), []byte("package lexer\n\n// TODO: CRLF\n"), 0o644))
	const marker = "PRIVATE-SUBAGENT-MARKER-7f3a"
	answer := `{"status":"completed","summary":"The lexer ignores CRLF.","findings":[{"file":"lexer.go","line":3,"claim":"CRLF is a TODO","confidence":"high"}],"recommended_next_steps":["handle \\r\\n"],"tests_to_run":["go test ./lexer"],"uncertainties":[]}`
	f.srv.Enqueue(
		// parent
		llmtest.Reply().ToolCall("call_d", "delegate", `{"task":"check CRLF handling in the lexer","scope":{"paths":["lexer.go"]}}`, 2).Finish("tool_calls").Usage(100, 10, 0, 0.01),
		// subagent
		llmtest.Reply().Reasoning(marker+" thinking").ToolCall("call_s", "read_file", `{"path":"lexer.go","note":"`+marker+`"}`, 1).Finish("tool_calls").Usage(50, 5, 0, 0.002),
		llmtest.Reply().Pause(1500*time.Millisecond).Content(answer).Finish("stop").Usage(60, 30, 0, 0.003),
		// parent again
		llmtest.Text("The subagent found the CRLF TODO; I checked lexer.go:3."),
	)
	require.NoError(t, f.Command("Fido does the lexer handle CRLF?"))

	winbar := f.Bool(t, `vim.fn.exists("+winbar") == 1`)
	running := `(function()
		local tw = require("fido.layout").transcript_win()
		if not tw then return false end
		if vim.fn.exists("+winbar") == 1 then
			local wb = vim.wo[tw].winbar
			return wb:find("SUBAGENT", 1, true) ~= nil and wb:find("%#FidoSubagent#", 1, true) ~= nil
		end
		local fw = require("fido.activity").float()
		if not fw then return false end
		local line = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(fw), 0, 1, false)[1] or ""
		local cfg = vim.api.nvim_win_get_config(fw)
		return line:find("SUBAGENT", 1, true) ~= nil and vim.wo[fw].winhighlight:find("FidoSubagent", 1, true) ~= nil
			and cfg.relative == "win" and cfg.win == tw and cfg.focusable == false
	end)()`
	f.WaitFor(t, running+` and require("fido").status().subagent ~= nil and require("fido").status().subagent.phase ~= "completed"`,
		10*time.Second, `require("fido").status().subagent`)
	assert.True(t, f.Bool(t, `vim.api.nvim_get_current_win() ~= require("fido.activity").float()`), "the bar never takes focus")

	f.waitIdleAfter(t, 4)
	f.WaitFor(t, `require("fido").status().subagent.phase == "completed"`, 5*time.Second, `require("fido").status().subagent`)
	assert.True(t, f.Bool(t, running), "the final outcome stays until the next turn (winbar=%v)", winbar)
	var st struct {
		Subagent struct {
			AgentID string `msgpack:"agent_id"`
			Phase   string `msgpack:"phase"`
		} `msgpack:"subagent"`
		Usage struct {
			Calls int     `msgpack:"calls"`
			Cost  float64 `msgpack:"cost"`
		} `msgpack:"usage"`
		Sub struct {
			Calls int `msgpack:"calls"`
		} `msgpack:"subagent_usage"`
	}
	f.Lua(t, &st, `return require("fido").status()`)
	assert.True(t, strings.HasPrefix(st.Subagent.AgentID, "subagent-"))
	assert.Equal(t, 4, st.Usage.Calls, "subagent calls count toward the totals")
	assert.Equal(t, 2, st.Sub.Calls, "and are shown separately")
	assert.InDelta(t, 0.015, st.Usage.Cost, 1e-9)
	var line string
	f.Lua(t, &line, `local w = require("fido.layout").transcript_win()
		vim.o.columns = 300
		vim.api.nvim_win_set_width(w, 200) -- wide enough for every segment
		return vim.api.nvim_eval_statusline(vim.wo[w].statusline, { winid = w, maxwidth = 300 }).str`)
	assert.Contains(t, line, "4 calls")
	assert.Contains(t, line, "(sub 2 · $0.0050)", "subagent usage shown separately in the statusline")

	tr := f.transcript(t)
	assert.NotContains(t, tr, marker, "the subagent's private work never reaches the transcript")
	assert.Contains(t, tr, "● delegate")
	reqs := f.srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, reqs[0].Get("tools").Raw, reqs[1].Get("tools").Raw, "the subagent advertises the same tools")
	last := string(reqs[3].Body)
	assert.NotContains(t, last, marker)
	assert.Contains(t, last, "delegate_result")
	assert.Contains(t, last, "CRLF is a TODO")

	// The next turn clears the bar.
	f.srv.Enqueue(llmtest.Text("ok"))
	require.NoError(t, f.Command("Fido thanks"))
	f.waitIdleAfter(t, 5)
	f.WaitFor(t, `require("fido").status().subagent == nil and not (`+running+`)`, 5*time.Second, `require("fido").status().subagent`)
}

// The API key never reaches the transcript, the log, snapshots or any state
// file — not even when the provider echoes it back in an error.
func TestE2EKeyNeverLeaks(t *testing.T) {
	const key = "sk-or-v1-SECRET0123456789abcdef"
	srv := llmtest.NewServer(t)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=" + key}})
	f := &fido{Nvim: n, srv: srv}
	n.Lua(t, nil, `require("fido").setup({ log_file = ... })`, filepath.Join(n.Tmp, "fido.log"))
	srv.Enqueue(llmtest.Status(401).Message("invalid key " + key + " for this account"))
	require.NoError(t, f.Command("Fido hello"))
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("401", 1, true) ~= nil`,
		10*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	srv.Enqueue(llmtest.Text("hi"))
	require.NoError(t, f.Command("Fido hello again"))
	f.waitIdleAfter(t, 1)
	require.NoError(t, f.Command("Fido /suspend key check"))
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("suspended", 1, true) ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	require.Equal(t, "Bearer "+key, srv.Requests()[0].Header.Get("Authorization"), "the key is used")

	assert.NotContains(t, f.transcript(t), key)
	var notes string
	n.Lua(t, &notes, `return vim.inspect(_G.fido_notes or {}) .. vim.api.nvim_exec("messages", true)`)
	assert.NotContains(t, notes, key)
	files := 0
	for _, dir := range []string{n.Tmp} {
		require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || info.Size() > 10<<20 || strings.HasSuffix(p, "nvim.sock") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err == nil {
				files++
				assert.NotContains(t, string(b), key, "key found in %s", p)
			}
			return nil
		}))
	}
	assert.Greater(t, files, 2, "the log, the snapshot and the state were checked")
	_, err := os.Stat(filepath.Join(n.Tmp, "fido.log"))
	assert.NoError(t, err, "the log exists")
}

// :FidoCancel during a subagent's request reaches it at once; the bar shows
// cancelled and the session is idle with the draft back in the input.
func TestE2ECancelReachesSubagent(t *testing.T) {
	f := startFido(t, "")
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_d", "delegate", `{"task":"review the package"}`, 1).Finish("tool_calls"),
		llmtest.Reply().Reasoning("looking").Stall(),
	)
	require.NoError(t, f.Command("Fido review it"))
	f.WaitFor(t, `require("fido").status().subagent ~= nil and require("fido").status().subagent.phase == "reasoning"`, 10*time.Second,
		`require("fido").status().subagent`)
	require.NoError(t, f.Command("FidoCancel"))
	f.WaitFor(t, `require("fido").status().state == "idle"`, 2*time.Second, `require("fido").status()`)
	f.WaitFor(t, `require("fido").status().subagent ~= nil and require("fido").status().subagent.phase == "cancelled"`, 3*time.Second,
		`require("fido").status().subagent`)
	f.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "review it"`, 2*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	// The next turn works normally.
	f.srv.Enqueue(llmtest.Text("fine"))
	require.NoError(t, f.Command("Fido again"))
	f.WaitFor(t, `vim.tbl_contains(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "fine")`, 10*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
}

// ask_an_expert: the question is put in the registers and a float; the answer
// pasted below the separator and sent with <CR> becomes the tool result.
func TestE2EAskAnExpert(t *testing.T) {
	f := startFido(t, "")
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_e", "ask_an_expert", `{"question":"Which port does the staging gateway use?"}`, 2).Finish("tool_calls"),
		llmtest.Text("Thanks, using 8443."),
	)
	require.NoError(t, f.Command("Fido configure staging"))
	f.WaitFor(t, `vim.fn.bufnr("fido://expert") ~= -1 and vim.api.nvim_get_current_buf() == vim.fn.bufnr("fido://expert")`, 10*time.Second,
		`vim.api.nvim_buf_get_name(0)`)
	assert.Equal(t, "Which port does the staging gateway use?", f.Lines(t, "fido://expert")[2])
	var reg string
	f.Lua(t, &reg, `return vim.fn.getreg('"')`)
	assert.Equal(t, "Which port does the staging gateway use?", reg)
	f.Lua(t, nil, `vim.api.nvim_buf_set_lines(0, -1, -1, false, {"It uses 8443,", "behind the VPN."})`)
	require.NoError(t, f.Command(`execute "normal \<CR>"`))
	f.waitIdleAfter(t, 2)
	assert.Equal(t, -1, func() int { var b int; f.Lua(t, &b, `return vim.fn.bufnr("fido://expert")`); return b }(), "the float is gone")
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Get("messages").Array()
	assert.JSONEq(t, `{"answer":"It uses 8443,\nbehind the VPN."}`, msgs[len(msgs)-1].Get("content").String())
}

// The transcript highlights inline code, bold and fenced code (filetype fido).
func TestE2ETranscriptSyntax(t *testing.T) {
	f := startFido(t, "")
	f.srv.Enqueue(llmtest.Text("Use `go test` **now**:\n\n```go\nfunc main() {}\n```"))
	require.NoError(t, f.Command("Fido how?"))
	f.waitIdleAfter(t, 1)
	var syn []string
	f.Lua(t, &syn, `
		local w = require("fido.layout").transcript_win()
		local b = vim.api.nvim_win_get_buf(w)
		local function at(pat, off)
			for i, l in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do
				local c = l:find(pat, 1, true)
				if c then
					return vim.api.nvim_win_call(w, function()
						return vim.fn.synIDattr(vim.fn.synID(i, c + off, 1), "name")
					end)
				end
			end
			return "not found: " .. pat
		end
		return { vim.bo[b].syntax, at("go test", 0), at("**now**", 2), at("func main", 0) }`)
	assert.Equal(t, []string{"fido", "fidoInlineCode", "fidoBold", "fidoCodeBlock"}, syn)
}

// <C-o> in the input picks a workspace file (ignore rules applied in a git
// repository) and inserts its mention; :Fido completes @paths.
func TestE2EMentionPicker(t *testing.T) {
	f := startFido(t, "")
	for p, c := range map[string]string{"main.go": "package main\n", "pkg/lexer.go": "package pkg\n", "build/out.bin": "x", ".gitignore": "build/\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(f.Dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(f.Dir, p), []byte(c), 0o644))
	}
	if _, err := exec.LookPath("git"); err == nil {
		require.NoError(t, exec.Command("git", "-C", f.Dir, "init", "-q").Run())
	}
	require.NoError(t, f.Command("Fido"))
	f.Lua(t, nil, `_G.offered = nil
vim.ui.select = function(items, opts, cb) _G.offered = items; cb("pkg/lexer.go", 2) end`)
	f.Lua(t, nil, `vim.api.nvim_set_current_win(require("fido.layout").input_win())
vim.api.nvim_set_current_line("explain ")
vim.api.nvim_win_set_cursor(0, {1, 7})`)
	require.NoError(t, f.Command(`execute "normal \<C-o>"`))
	f.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "explain @pkg/lexer.go "`, 3*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	var offered []string
	f.Lua(t, &offered, `return _G.offered`)
	assert.Contains(t, offered, "main.go")
	assert.Contains(t, offered, "pkg/lexer.go")
	assert.NotContains(t, offered, "build/out.bin", "ignored files are not offered")
	var comp []string
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido explain @pk", "cmdline")`)
	assert.Equal(t, []string{"@pkg/lexer.go"}, comp, "the picker's files, ignore rules applied")
}

// websearch reaches the configured Tavily endpoint with the key in the
// Authorization header only, and the result comes back to the model.
func TestE2EWebsearch(t *testing.T) {
	var gotAuth, gotBody string
	tav := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotAuth, gotBody = r.Header.Get("Authorization"), string(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"query":"neovim winbar","answer":"Neovim 0.8 added winbar.","results":[{"title":"News 0.8","url":"https://neovim.io/news/","content":"winbar","score":0.9}],"response_time":"0.5"}`)
	}))
	t.Cleanup(tav.Close)
	srv := llmtest.NewServer(t)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=k",
		"TAVILY_API_KEY=tvly-secret", "FIDO_TAVILY_URL=" + tav.URL}})
	f := &fido{Nvim: n, srv: srv}
	srv.Enqueue(
		llmtest.Reply().ToolCall("call_w", "websearch", `{"query":"neovim winbar"}`, 1).Finish("tool_calls"),
		llmtest.Text("Since 0.8."),
	)
	require.NoError(t, f.Command("Fido when did winbar land?"))
	f.waitIdleAfter(t, 2)
	assert.Equal(t, "Bearer tvly-secret", gotAuth)
	assert.NotContains(t, gotBody, "tvly-secret")
	msgs := srv.Requests()[1].Get("messages").Array()
	assert.Contains(t, msgs[len(msgs)-1].Get("content").String(), "Neovim 0.8 added winbar.")
	assert.Contains(t, f.transcript(t), "● websearch")
}

// bash_exec asks through vim.ui.select with the command beside it; "Run
// once" runs it in the workspace, its output reaches the model, and a buffer
// whose file the command changed is reloaded; "Deny" runs nothing.
func TestE2EBashExecApprovalAndRefresh(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "version.txt")
	require.NoError(t, os.WriteFile(path, []byte("v1\n"), 0o644))
	require.NoError(t, f.Command("edit "+path))
	f.Lua(t, nil, `_G.asked = {}
_G.answer = "Run once"
vim.ui.select = function(items, opts, cb)
  table.insert(_G.asked, { prompt = opts.prompt, items = items })
  for i, it in ipairs(items) do if it == _G.answer then return cb(it, i) end end
  cb(nil, nil)
end`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_b", "bash_exec", `{"command":"echo v2-longer > version.txt && pwd && echo done"}`, 2).Finish("tool_calls"),
		llmtest.Text("Bumped."),
	)
	require.NoError(t, f.Command("Fido bump the version"))
	f.waitIdleAfter(t, 2)
	var asked []struct {
		Prompt string   `msgpack:"prompt"`
		Items  []string `msgpack:"items"`
	}
	f.Lua(t, &asked, `return _G.asked`)
	require.Len(t, asked, 1)
	assert.Equal(t, "Run this command? (shown above)", asked[0].Prompt)
	assert.Equal(t, []string{"Deny", "Deny with reason…", "Run once", "Always this session: this exact command", "Always in this workspace: this exact command"}, asked[0].Items,
		"the least permissive choice first; no prefix rule alone covers echo and pwd")
	assert.Contains(t, f.Lines(t, "fido://question/call_b"), "echo v2-longer > version.txt && pwd && echo done",
		"the whole command is shown beside the picker")
	msgs := f.srv.Requests()[1].Get("messages").Array()
	out := msgs[len(msgs)-1].Get("content").String()
	assert.Contains(t, out, f.Dir, "runs in the workspace root")
	assert.Contains(t, out, "done")
	buf := fmt.Sprintf("vim.fn.bufnr(%q)", path)
	f.WaitFor(t, `vim.fn.getbufline(`+buf+`, 1)[1] == "v2-longer"`, 5*time.Second, `vim.fn.getbufline(`+buf+`, 1, "$")`)

	// Deny: nothing runs.
	f.Lua(t, nil, `_G.answer = "Deny"`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_c", "bash_exec", `{"command":"touch denied.txt"}`, 1).Finish("tool_calls"),
		llmtest.Text("OK, not running it."),
	)
	require.NoError(t, f.Command("Fido touch it"))
	f.waitIdleAfter(t, 4)
	_, err := os.Stat(filepath.Join(f.Dir, "denied.txt"))
	assert.True(t, os.IsNotExist(err), "a denied command never runs")
	msgs = f.srv.Requests()[3].Get("messages").Array()
	assert.Contains(t, msgs[len(msgs)-1].Get("content").String(), "declined")
}

// javascript_execute runs offline by default and its result reaches the model.
func TestE2EJavascriptExecute(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "data.json"), []byte(`{"xs":[3,1,2]}`), 0o644))
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_j", "javascript_execute",
			`{"code":"const d = require('./data.json'); console.log('n', d.xs.length); module.exports = d.xs.sort()"}`, 2).Finish("tool_calls"),
		llmtest.Text("Sorted."),
	)
	require.NoError(t, f.Command("Fido sort the data"))
	f.waitIdleAfter(t, 2)
	msgs := f.srv.Requests()[1].Get("messages").Array()
	res := msgs[len(msgs)-1].Get("content").String()
	assert.Contains(t, res, `"result":[1,2,3]`)
	assert.Contains(t, res, `"network":"offline"`)
	assert.Contains(t, f.transcript(t), "● javascript_execute")
}

// A subagent that tries the JS runner, a patch or the plan gets
// permission_denied: no prompt is shown and nothing changes. Its shell
// command is asked and runs only in a read-only sandbox, where the machine
// enforces one (else it is denied too).
func TestE2ESubagentCannotMutate(t *testing.T) {
	f := startFido(t, "")
	enforced := sandbox.Probe().Enforced
	f.Lua(t, nil, `_G.prompted = 0
vim.ui.select = function(items, opts, cb)
  _G.prompted = _G.prompted + 1
  for i, it in ipairs(items) do if it == "Run once" then return cb(it, i) end end
  cb(items[1], 1)
end`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_d", "delegate", `{"task":"try everything"}`, 1).Finish("tool_calls"),
		llmtest.Reply().
			ToolCall("s1", "bash_exec", `{"command":"touch pwned.txt"}`, 1).
			ToolCall("s2", "javascript_execute", `{"code":"1+1"}`, 1).
			ToolCall("s3", "patch", `{"operations":[{"path":"pwned2.txt","content":"x"}]}`, 1).
			ToolCall("s4", "update_plan", `{"reason":"r","items":[]}`, 1).
			Finish("tool_calls"),
		llmtest.Text(`{"status":"completed","summary":"denied everywhere","findings":[],"recommended_next_steps":[],"tests_to_run":[],"uncertainties":[]}`),
		llmtest.Text("The subagent could not change anything."),
	)
	require.NoError(t, f.Command("Fido delegate it"))
	f.waitIdleAfter(t, 4)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 4)
	sub := reqs[2].Get("messages").Array()
	denied := 0
	for _, m := range sub[len(sub)-4:] {
		if strings.Contains(m.Get("content").String(), "permission_denied") {
			denied++
		}
	}
	var prompted int
	f.Lua(t, &prompted, `return _G.prompted`)
	if enforced {
		assert.Equal(t, 3, denied, "every mutating call but the sandboxed command is denied")
		assert.Contains(t, sub[len(sub)-4].Get("content").String(), "pwned.txt: read-only sandbox")
		assert.Equal(t, 1, prompted, "only the command was asked")
	} else {
		assert.Equal(t, 4, denied, "every mutating call of the subagent is denied")
		assert.Zero(t, prompted, "no approval prompt for a subagent")
	}
	for _, p := range []string{"pwned.txt", "pwned2.txt"} {
		_, err := os.Stat(filepath.Join(f.Dir, p))
		assert.True(t, os.IsNotExist(err), p)
	}
	assert.True(t, f.Bool(t, `require("fido").status().plan == nil`), "the plan is untouched")
}

// /undo lists Fido's changes; /undo revert restores the file, reloads its
// buffer and tells the model.
func TestE2EUndoRevert(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "cfg.txt")
	require.NoError(t, os.WriteFile(path, []byte("port = 80\n"), 0o644))
	require.NoError(t, f.Command("edit "+path))
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_p", "patch", `{"operations":[{"path":"cfg.txt","search":"80","replace":"8080"}]}`, 1).Finish("tool_calls"),
		llmtest.Text("Changed the port."),
	)
	require.NoError(t, f.Command("Fido use port 8080"))
	f.waitIdleAfter(t, 2)
	buf := fmt.Sprintf("vim.fn.bufnr(%q)", path)
	f.WaitFor(t, `vim.fn.getbufline(`+buf+`, 1)[1] == "port = 8080"`, 5*time.Second, `vim.fn.getbufline(`+buf+`, 1, "$")`)

	require.NoError(t, f.Command("Fido /undo"))
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("patch edit cfg.txt", 1, true) ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	require.NoError(t, f.Command("Fido /undo revert"))
	f.WaitFor(t, `vim.fn.getbufline(`+buf+`, 1)[1] == "port = 80"`, 5*time.Second, `vim.fn.getbufline(`+buf+`, 1, "$")`,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), -4, -1, false)`)
	disk, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "port = 80\n", string(disk))

	f.srv.Enqueue(llmtest.Text("Understood."))
	require.NoError(t, f.Command("Fido ok"))
	f.waitIdleAfter(t, 3)
	assert.Contains(t, string(f.srv.Requests()[2].Body), "reverted your most recent file change")
}

// <C-x><C-o> in the input completes slash commands and @paths.
func TestE2EInputOmniCompletion(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.MkdirAll(filepath.Join(f.Dir, "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "pkg", "lexer.go"), []byte("package pkg\n"), 0o644))
	require.NoError(t, f.Command("Fido"))
	var got []string
	f.Lua(t, &got, `
		vim.api.nvim_set_current_win(require("fido.layout").input_win())
		local function typed(keys)
			vim.api.nvim_buf_set_lines(0, 0, -1, false, { "" })
			vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
			return vim.api.nvim_get_current_line()
		end
		return {
			typed("i/und<C-x><C-o><Esc>"),
			typed("i/und<C-x><C-o><C-n><Esc>"),
			typed("iread @pkg/le<C-x><C-o><Esc>"),
			typed("ihello wor<C-x><C-o><Esc>"),
		}`)
	assert.Equal(t, []string{"/undo", "/undo revert", "read @pkg/lexer.go", "hello wor"}, got)
}

// :FidoPlan hide and toggle change only the window; the plan stays.
func TestE2EPlanHideAndToggle(t *testing.T) {
	f := startFido(t, "")
	f.makePlan(t)
	f.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)
	require.NoError(t, f.Command("FidoPlan hide"))
	f.WaitFor(t, `require("fido.planwin").win() == nil`, 5*time.Second)
	assert.True(t, f.Bool(t, `require("fido").status().plan ~= nil`), "hiding keeps the plan")
	require.NoError(t, f.Command("FidoPlan toggle"))
	f.WaitFor(t, `require("fido.planwin").win() ~= nil`, 5*time.Second)
	assert.False(t, f.Bool(t, `vim.api.nvim_get_current_win() == require("fido.planwin").win()`), "toggle does not steal focus")
	require.NoError(t, f.Command("FidoPlan toggle"))
	f.WaitFor(t, `require("fido.planwin").win() == nil`, 5*time.Second)
	var comp []string
	f.Lua(t, &comp, `return vim.fn.getcompletion("FidoPlan ", "cmdline")`)
	assert.Equal(t, []string{"clear", "hide", "toggle"}, comp)
}

// The context budget follows the model's window from the endpoint's model
// list: with a small window, the conversation is compacted with a summary the
// model writes before the request that would pass it, and the transcript
// says so; the summary request keeps the system message and the tools.
func TestE2EContextBudgetFromModelList(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetModels(`{"data":[{"id":"test/model","context_length":4000}]}`)
	n := nvimtest.Start(t, nvimtest.Options{Fido: true, Env: []string{"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=k", "FIDO_MODEL=test/model"}})
	f := &fido{Nvim: n, srv: srv}
	big := strings.Repeat("line of a big file\n", 400) // ~7.6 KB ≈ 1.9k tokens
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "big.txt"), []byte(big), 0o644))
	// The budget (3/4 of 4,000 tokens) is below the tool catalog alone, so
	// once there are more turns than the two always kept (the fourth
	// message), the turn first asks for a summary.
	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `(require("fido").status().context or {}).limit == 3000`, 10*time.Second, `require("fido").status()`)
	for i := 0; i < 4; i++ {
		if i >= 3 {
			srv.Enqueue(llmtest.Text(fmt.Sprint("SUMMARY-", i)))
		}
		srv.Enqueue(
			llmtest.Reply().ToolCall(fmt.Sprint("r", i), "read_file", `{"path":"big.txt"}`, 1).Finish("tool_calls"),
			llmtest.Text(fmt.Sprint("read ", i)),
		)
		require.NoError(t, f.Command(fmt.Sprint("Fido read it ", i)))
		f.waitRequests(t, 2*(i+1)+max(0, i-2))
	}
	f.waitTranscript(t, "read 3", 5*time.Second)
	assert.Contains(t, f.transcript(t), "compacting it with a summary from the model first")
	reqs := srv.Requests()
	require.Len(t, reqs, 9)
	summaryReq, last := reqs[6], reqs[len(reqs)-1]
	assert.Contains(t, summaryReq.Get("messages.@reverse.0.content").String(), "Summarize the conversation so far")
	assert.Equal(t, reqs[0].Get("messages.0").Raw, summaryReq.Get("messages.0").Raw, "the summary request keeps the system message")
	assert.Equal(t, reqs[0].Get("tools").Raw, summaryReq.Get("tools").Raw, "and the tools")
	body := string(last.Body)
	assert.Contains(t, body, "SUMMARY-3")
	assert.NotContains(t, body, "read it 0", "the oldest turn is replaced by the summary")
	assert.Contains(t, body, "read it 1", "the two newest turns before the message stay")
	assert.Contains(t, body, "read it 2")
	assert.Contains(t, body, "read it 3")
}
