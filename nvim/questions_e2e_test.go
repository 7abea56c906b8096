package nvim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// fakePicker replaces vim.ui.select with a picker that behaves like the real
// ones users have. Telescope, fzf-lua, snacks and dressing cannot be fetched
// in CI (no network beyond the Go proxy, apt and npm), so their behaviours
// that matter here are reproduced faithfully:
//   - a focused float (zindex 50) listing the items, <CR> picks the line
//     under the cursor (the first one when it opens);
//   - opening a picker closes one that is already open without calling its
//     callback (telescope and fzf-lua replace their own picker);
//   - <Esc> closes it without calling back (fzf-lua, its issue #2439);
//   - with close_on_leave, focus leaving closes it without calling back
//     (telescope-ui-select, its issue #32).
//
// Every call is logged with the mode it was opened in; keys that reach a
// picker's window are logged too.
const fakePicker = `
_G.fake = { open = nil, log = {}, keys = {}, close_on_leave = false }
local fake = _G.fake
vim.on_key(function(k)
  if fake.open and vim.api.nvim_get_current_win() == fake.open.win then
    table.insert(fake.keys, k)
  end
end, vim.api.nvim_create_namespace("fake_picker_keys"))
vim.ui.select = function(items, opts, on_choice)
  if fake.open and vim.api.nvim_win_is_valid(fake.open.win) then
    vim.api.nvim_win_close(fake.open.win, true) -- replaced: no callback
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, items)
  local win = vim.api.nvim_open_win(buf, true, { relative = "editor", row = 3, col = 3, width = 40,
    height = #items, border = "single", zindex = 50 })
  local entry = { win = win, items = items }
  fake.open = entry
  table.insert(fake.log, { prompt = opts.prompt, items = items, mode = vim.api.nvim_get_mode().mode })
  local function close()
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_close(win, true) end
    if fake.open == entry then fake.open = nil end
  end
  vim.keymap.set("n", "<CR>", function()
    local i = vim.api.nvim_win_get_cursor(win)[1]
    close()
    on_choice(items[i], i)
  end, { buffer = buf })
  vim.keymap.set("n", "<Esc>", close, { buffer = buf })
  if fake.close_on_leave then
    vim.api.nvim_create_autocmd("WinLeave", { buffer = buf, once = true, callback = function() vim.schedule(close) end })
  end
end
function _G.fake_count() return #fake.log end
`

// startQuestions starts Fido with the fake picker asking every question
// (questions.ui = "select"; Fido's own window is tested in
// questions_tui_test.go and questionwin_e2e_test.go).
func startQuestions(t *testing.T) (*nvimtest.Nvim, *llmtest.Server) {
	t.Helper()
	n, srv := startFido(t)
	n.Lua(t, nil, fakePicker)
	n.Lua(t, nil, `require("fido").setup({ questions = { ui = "select" } })`)
	require.NoError(t, n.Command("Fido"))
	return n, srv
}

// approvalTurn queues a bash_exec call of command followed by a final answer,
// and submits a prompt without a keystroke.
func approvalTurn(t *testing.T, n *nvimtest.Nvim, srv *llmtest.Server, call, command string) {
	t.Helper()
	args := fmt.Sprintf(`{"command":%q}`, command)
	srv.Enqueue(llmtest.Reply().ToolCall(call, "bash_exec", args, 2).Finish("tool_calls"), llmtest.Text("Finished."))
	n.Lua(t, nil, `require("fido").submit("run it")`)
}

func lastToolResult(t *testing.T, srv *llmtest.Server, req int) string {
	t.Helper()
	reqs, err := srv.WaitRequests(req+1, 10*time.Second)
	require.NoError(t, err)
	msgs := reqs[req].Get("messages").Array()
	return msgs[len(msgs)-1].Get("content").String()
}

func keys(t *testing.T, n *nvimtest.Nvim, k string) {
	t.Helper()
	_, err := n.Input(k)
	require.NoError(t, err)
}

// The user's own picker is open when an approval arrives: the approval waits
// (statusline says so), the user's <CR> picks their file and never runs the
// command; the approval opens after, with Deny first.
func TestE2EApprovalWaitsForTheUsersPicker(t *testing.T) {
	n, srv := startQuestions(t)
	n.Lua(t, nil, `vim.ui.select({ "a.go", "b.go" }, { prompt = "Mention a file" }, function(c) _G.user_choice = c end)`)
	approvalTurn(t, n, srv, "call_w", "touch ran.txt")
	n.WaitFor(t, `#require("fido.questions").queued() == 1`, 10*time.Second, `require("fido").status()`)
	time.Sleep(1600 * time.Millisecond) // past the quiet second and the guard: still waiting, a float has focus
	assert.True(t, n.Bool(t, `fake_count() == 1`), "the approval did not replace the user's picker")
	var line string
	n.Lua(t, &line, `return require("fido").statusline()`)
	assert.Contains(t, line, "waiting for approval")
	assert.True(t, n.Bool(t, `require("fido").status().waiting == "approval"`))

	keys(t, n, "<CR>")
	n.WaitFor(t, `_G.user_choice == "a.go"`, 5*time.Second, `_G.user_choice`)
	n.WaitFor(t, `fake_count() == 2`, 5*time.Second, `_G.fake.log`)
	var items []string
	n.Lua(t, &items, `return _G.fake.log[2].items`)
	assert.Equal(t, []string{"Deny", "Deny with reason…", "Run once", "Always this session: touch", "Always in this workspace: touch"}, items, "the least permissive choice first")
	_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
	assert.True(t, os.IsNotExist(err), "the <CR> meant for the user's picker ran nothing")

	keys(t, n, "<CR>") // the first item: Deny
	assert.Contains(t, lastToolResult(t, srv, 1), "the user denied")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second)
	_, err = os.Stat(filepath.Join(n.Dir, "ran.txt"))
	assert.True(t, os.IsNotExist(err))
	n.Lua(t, &line, `return require("fido").statusline()`)
	assert.NotContains(t, line, "waiting for approval")
}

// A picker that closes without calling back (fzf-lua's <Esc>, telescope
// losing focus) counts as dismissed within a second; the turn goes on.
func TestE2EApprovalPickerClosedWithoutAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(n *nvimtest.Nvim)
	}{
		{"esc never calls back", func(n *nvimtest.Nvim) { keys(t, n, "<Esc>") }},
		{"focus leaves", func(n *nvimtest.Nvim) {
			n.Lua(t, nil, `vim.api.nvim_set_current_win(require("fido.layout").input_win())`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, srv := startQuestions(t)
			n.Lua(t, nil, `_G.fake.close_on_leave = true`)
			approvalTurn(t, n, srv, "call_e", "touch ran.txt")
			n.WaitFor(t, `fake_count() == 1 and _G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
			start := time.Now()
			tc.close(n)
			n.WaitFor(t, `require("fido.questions").current() == nil`, 2*time.Second, `require("fido.questions").current()`, `_G.fake.open`)
			assert.Less(t, time.Since(start), time.Second+200*time.Millisecond)
			assert.Contains(t, lastToolResult(t, srv, 1), "dismissed the approval prompt")
			n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second)
			_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
			assert.True(t, os.IsNotExist(err))
		})
	}
}

// :FidoCancel closes the approval's picker and its preview; the turn ends.
func TestE2EFidoCancelClosesTheApproval(t *testing.T) {
	n, srv := startQuestions(t)
	approvalTurn(t, n, srv, "call_c", "touch ran.txt")
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
	var win int
	n.Lua(t, &win, `return _G.fake.open.win`)
	require.NoError(t, n.Command("FidoCancel"))
	n.WaitFor(t, fmt.Sprintf(`not vim.api.nvim_win_is_valid(%d)`, win), 2*time.Second)
	n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second)
	assert.True(t, n.Bool(t, `require("fido.questions").current() == nil and #require("fido.questions").queued() == 0`))
	assert.True(t, n.Bool(t, `(function()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then return false end
  end
  return true
end)()`), "no float of the question is left")
	_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
	assert.True(t, os.IsNotExist(err))
}

// :FidoApprove reopens an open question whose picker the user lost; the old
// picker's late answer is ignored.
func TestE2EFidoApproveReopens(t *testing.T) {
	n, srv := startQuestions(t)
	approvalTurn(t, n, srv, "call_r", "touch ran.txt")
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
	require.NoError(t, n.Command("FidoApprove"))
	n.WaitFor(t, `fake_count() == 2 and _G.fake.open ~= nil`, 5*time.Second, `_G.fake.log`)
	keys(t, n, "jj<CR>") // the third item: Run once
	// The model's next request carries the result (the status may not have
	// left "idle" yet when the picker opened: prompts are not coalesced).
	assert.NotContains(t, lastToolResult(t, srv, 1), "declined")
	_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
	assert.NoError(t, err, "the reopened approval ran the command")
}

// An approval that arrives while the user types in the input waits as long
// as they write: in insert mode, and then while the input holds the unsent
// text, long past the quiet second. No typed key reaches the picker, the
// input keeps every key, one notification and the statusline say how to
// answer; the answer key (ga, normal mode) opens it.
func TestE2EApprovalWaitsWhileTyping(t *testing.T) {
	n, srv := startQuestions(t)
	keys(t, n, "i")
	n.WaitFor(t, `vim.api.nvim_get_mode().mode == "i"`, 2*time.Second)
	typed := "the quick brown fox jumps over the lazy dog and then thanks"
	for i, r := range typed {
		if i == 5 {
			srv.Enqueue(llmtest.Reply().ToolCall("call_t", "bash_exec", `{"command":"touch ran.txt"}`, 2).Finish("tool_calls"),
				llmtest.Text("Finished."))
			n.Lua(t, nil, `require("fido").submit("run it")`)
		}
		keys(t, n, string(r))
		time.Sleep(60 * time.Millisecond)
	}
	n.WaitFor(t, `#require("fido.questions").queued() == 1`, 5*time.Second)
	time.Sleep(1600 * time.Millisecond) // past the quiet second and the guard: still in insert mode
	assert.True(t, n.Bool(t, `fake_count() == 0`), "no picker while the user is in insert mode")
	keys(t, n, "<Esc>")
	time.Sleep(1600 * time.Millisecond)
	assert.True(t, n.Bool(t, `fake_count() == 0`), "no picker while the input holds unsent text")
	var got []string
	n.Lua(t, &got, `return vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	assert.Equal(t, []string{typed}, got, "every typed key stayed in the input")
	var line string
	n.Lua(t, &line, `return require("fido").statusline(200)`)
	assert.Contains(t, line, "waiting for approval: ga")
	assert.Equal(t, 1, noteCount(t, n, "an approval waits"), "one notification says what waits")
	assert.Equal(t, 1, noteCount(t, n, "ga (normal mode, Fido's windows) or :FidoApprove"), "and how to answer")

	keys(t, n, "ga")
	n.WaitFor(t, `fake_count() == 1`, 5*time.Second, `_G.fake.log`, `vim.api.nvim_get_mode()`)
	var pk []string
	n.Lua(t, &pk, `return _G.fake.keys`)
	assert.Empty(t, pk, "no typed key reached the picker")
	var mode string
	n.Lua(t, &mode, `return _G.fake.log[1].mode`)
	assert.Equal(t, "n", mode, "the picker opens in normal mode")
	keys(t, n, "<CR>")
	assert.Contains(t, lastToolResult(t, srv, 1), "the user denied")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	n.Lua(t, &got, `return vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	assert.Equal(t, []string{typed}, got, "the unsent text is still there")
}

// A 13-line command is shown whole, as sh, with its working directory and
// timeout, while the picker's prompt stays one short line; :FidoShow opens
// it again in a scratch buffer.
func TestE2EApprovalShowsTheWholeCommand(t *testing.T) {
	n, srv := startQuestions(t)
	n.Lua(t, nil, `vim.o.lines = 40`) // room below the picker for the whole command
	var lines []string
	for i := 0; i < 13; i++ {
		lines = append(lines, fmt.Sprintf("echo step%d >> f.txt", i))
	}
	command := strings.Join(lines, "\n")
	approvalTurn(t, n, srv, "call_m", command)
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
	var prompt string
	n.Lua(t, &prompt, `return _G.fake.log[1].prompt`)
	assert.Equal(t, "Run this command? (13 lines, shown above)", prompt)
	var pv struct {
		Lines    []string `msgpack:"lines"`
		Filetype string   `msgpack:"filetype"`
		Title    string   `msgpack:"title"`
		Focus    bool     `msgpack:"focusable"`
	}
	n.WaitFor(t, `require("fido.questions").current().placed ~= nil`, 5*time.Second)
	n.Lua(t, &pv, `local w = require("fido.questions").current().detail_win
local b = vim.api.nvim_win_get_buf(w)
local cfg = vim.api.nvim_win_get_config(w)
local ls = vim.api.nvim_buf_get_lines(b, 0, -1, false)
local title = table.remove(ls, 1) .. " " .. table.remove(ls, 1)
return { lines = ls, filetype = vim.bo[b].filetype, title = title, focusable = cfg.focusable }`)
	assert.Equal(t, lines, pv.Lines, "every line of the command")
	assert.Equal(t, "sh", pv.Filetype)
	assert.Contains(t, pv.Title, n.Dir, "the working directory")
	assert.Contains(t, pv.Title, "timeout 120s")
	assert.True(t, strings.Contains(pv.Title, "sandbox: workspace-write, .git read-only, no network") || strings.Contains(pv.Title, "NOT sandboxed: "),
		"how confined it runs: %s", pv.Title)
	assert.False(t, pv.Focus, "the preview never takes a key")
	assert.True(t, n.Bool(t, `(function()
  local d = require("fido.questions").current().detail_win
  local p = _G.fake.open.win
  -- Both have borders: a box covers its position's row to height + 1 below.
  local dt, dh = vim.api.nvim_win_get_position(d)[1], vim.api.nvim_win_get_height(d)
  local pt, ph = vim.api.nvim_win_get_position(p)[1], vim.api.nvim_win_get_height(p)
  return dt + dh + 1 < pt or dt > pt + ph + 1
end)()`), "the picker covers no line of the command: %s", func() string {
		var s string
		n.Lua(t, &s, `local d = require("fido.questions").current().detail_win
return vim.inspect({ vim.o.lines, vim.api.nvim_win_get_position(d), vim.api.nvim_win_get_height(d), vim.api.nvim_win_get_position(_G.fake.open.win), vim.api.nvim_win_get_height(_G.fake.open.win) })`)
		return s
	}())
	keys(t, n, "<CR>") // Deny
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	n.WaitFor(t, `require("fido.questions").current() == nil`, 2*time.Second)
	assert.True(t, n.Bool(t, `(function()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then return false end
  end
  return true
end)()`), "the preview closes with the question")

	n.WaitFor(t, `vim.fn.match(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), ":FidoShow call_m") >= 0`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	require.NoError(t, n.Command("FidoShow call_m"))
	var shown []string
	n.Lua(t, &shown, `return vim.api.nvim_buf_get_lines(0, 0, -1, false)`)
	require.NotEmpty(t, shown)
	assert.Equal(t, lines, shown[1:])
	assert.True(t, n.Bool(t, `vim.bo.filetype == "sh" and vim.api.nvim_buf_get_name(0):match("fido://show/call_m$") ~= nil`))
}

const eventPlanArgs = `{"reason":"fix the lexer","items":[` +
	`{"id":"impl","title":"Fix tokenizing","status":"in_progress","next_action":"patch lexer.go"}]}`

// User FidoPlanUpdated, FidoApprovalNeeded and FidoTurnDone fire with their
// data (vim.g.fido_event on 0.7, which has no autocmd data); with Fido's
// windows closed a notification says an approval is needed and the turn ended.
func TestE2EUserEvents(t *testing.T) {
	n, srv := startFido(t)
	n.Lua(t, nil, fakePicker)
	n.Lua(t, nil, `require("fido").setup({ questions = { ui = "select" } })`)
	n.Lua(t, nil, `_G.events = {}
for _, p in ipairs({ "FidoPlanUpdated", "FidoApprovalNeeded", "FidoTurnDone" }) do
  vim.api.nvim_create_autocmd("User", { pattern = p, callback = function(ev)
    table.insert(_G.events, { name = p, data = ev.data or vim.g.fido_event })
  end })
end`)
	srv.Enqueue(
		llmtest.Reply().ToolCall("call_p", "update_plan", eventPlanArgs, 2).
			ToolCall("call_x", "bash_exec", `{"command":"true"}`, 2).Finish("tool_calls").Usage(100, 20, 0, 0.001),
		llmtest.Text("Done.").Usage(50, 5, 0, 0.001),
	)
	n.Lua(t, nil, `require("fido").submit("plan and run")`)
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.events`)
	keys(t, n, "<CR>") // Deny
	n.WaitFor(t, `#vim.tbl_filter(function(e) return e.name == "FidoTurnDone" end, _G.events) == 1`, 10*time.Second, `_G.events`)
	var evs []struct {
		Name string         `msgpack:"name"`
		Data map[string]any `msgpack:"data"`
	}
	n.Lua(t, &evs, `return _G.events`)
	byName := map[string]map[string]any{}
	for _, e := range evs {
		byName[e.Name] = e.Data
	}
	require.Contains(t, byName, "FidoPlanUpdated")
	plan, _ := byName["FidoPlanUpdated"]["plan"].(map[string]any)
	require.NotNil(t, plan, "the plan is in the data")
	assert.EqualValues(t, 1, plan["version"])
	require.Contains(t, byName, "FidoApprovalNeeded")
	assert.Equal(t, "call_x", byName["FidoApprovalNeeded"]["call"])
	assert.Equal(t, true, byName["FidoApprovalNeeded"]["approval"])
	assert.Equal(t, "true", byName["FidoApprovalNeeded"]["detail"])
	usage, _ := byName["FidoTurnDone"]["usage"].(map[string]any)
	require.NotNil(t, usage)
	assert.EqualValues(t, 2, usage["calls"])
	var notes []string
	n.Lua(t, &notes, `return vim.tbl_map(function(x) return x.msg end, _G.fido_notes)`)
	joined := strings.Join(notes, "\n")
	assert.Contains(t, joined, "approval needed: Run this command?")
	assert.Contains(t, joined, "the turn is done")
}

// javascript_execute asking for the network shows the whole script (as
// javascript) above a one-line prompt, "Run offline" first.
func TestE2ENetworkApprovalShowsTheCode(t *testing.T) {
	n, srv := startQuestions(t)
	code := "const r = await fetch('http://localhost:1/x');\nconsole.log(r.status);\nmodule.exports = 1"
	srv.Enqueue(llmtest.Reply().ToolCall("call_js", "javascript_execute",
		fmt.Sprintf(`{"code":%q,"allow_network":true}`, code), 2).Finish("tool_calls"), llmtest.Text("Done."))
	n.Lua(t, nil, `require("fido").submit("fetch it")`)
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
	var asked struct {
		Prompt string   `msgpack:"prompt"`
		Items  []string `msgpack:"items"`
	}
	n.Lua(t, &asked, `return _G.fake.log[1]`)
	assert.Equal(t, []string{"Run offline", "Allow network"}, asked.Items)
	assert.NotContains(t, asked.Prompt, "\n")
	assert.Contains(t, asked.Prompt, "shown above")
	body := n.Lines(t, "fido://question/call_js")
	assert.Subset(t, body, strings.Split(code, "\n"), "the whole script")
	assert.True(t, n.Bool(t, `vim.bo[vim.fn.bufnr("fido://question/call_js")].filetype == "javascript"`))
	keys(t, n, "<CR>") // Run offline
	assert.Contains(t, lastToolResult(t, srv, 1), "offline")
}

// A picker without windows of its own (answering later) is not dismissed
// when a notification float (unfocusable, as nvim-notify's) opens and
// closes meanwhile.
func TestE2EQuestionIgnoresNotificationFloats(t *testing.T) {
	n, srv := startFido(t)
	require.NoError(t, n.Command("Fido"))
	n.Lua(t, nil, `require("fido").setup({ questions = { ui = "select" } })`)
	n.Lua(t, nil, `vim.ui.select = function(items, opts, cb) _G.later = function() cb(items[1], 1) end end`)
	approvalTurn(t, n, srv, "call_n", "touch ran.txt")
	n.WaitFor(t, `_G.later ~= nil`, 10*time.Second)
	n.Lua(t, nil, `local b = vim.api.nvim_create_buf(false, true)
local w = vim.api.nvim_open_win(b, false, { relative = "editor", row = 0, col = 0, width = 20, height = 1, focusable = false })
vim.defer_fn(function() vim.api.nvim_win_close(w, true) end, 50)`)
	time.Sleep(700 * time.Millisecond)
	assert.True(t, n.Bool(t, `require("fido.questions").current() ~= nil`), "still waiting for the picker")
	n.Lua(t, nil, `_G.later()`)
	assert.Contains(t, lastToolResult(t, srv, 1), "the user denied")
}

// In terminal mode (a terminal picker, a shell) the approval waits until
// the user leaves it.
func TestE2EApprovalWaitsForTerminalMode(t *testing.T) {
	n, srv := startQuestions(t)
	n.Lua(t, nil, `vim.cmd("wincmd t"); vim.cmd("terminal"); vim.cmd("startinsert")`)
	n.WaitFor(t, `vim.api.nvim_get_mode().mode == "t"`, 5*time.Second, `vim.api.nvim_get_mode()`)
	approvalTurn(t, n, srv, "call_term", "touch ran.txt")
	n.WaitFor(t, `#require("fido.questions").queued() == 1`, 10*time.Second)
	time.Sleep(800 * time.Millisecond)
	assert.True(t, n.Bool(t, `fake_count() == 0`), "no picker over the terminal")
	keys(t, n, `<C-\><C-n>`)
	n.WaitFor(t, `fake_count() == 1`, 5*time.Second, `vim.api.nvim_get_mode()`)
	keys(t, n, "<CR>")
	assert.Contains(t, lastToolResult(t, srv, 1), "the user denied")
}
