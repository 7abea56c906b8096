package main

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
)

// lastTool is the newest tool message of the newest request.
func (f *fido) lastTool(t *testing.T) string {
	t.Helper()
	reqs := f.srv.Requests()
	msgs := reqs[len(reqs)-1].Get("messages").Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() == "tool" {
			return msgs[i].Get("content").String()
		}
	}
	t.Fatal("no tool message in the last request")
	return ""
}

// turn runs one user message whose reply is one tool call, then a text.
func (f *fido) turn(t *testing.T, prompt, id, tool, args string) {
	t.Helper()
	calls := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().ToolCall(id, tool, args, 2).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("ok"),
	)
	require.NoError(t, f.Command("Fido "+prompt))
	f.waitIdleAfter(t, calls+2)
}

func (f *fido) disk(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.Dir, rel))
	require.NoError(t, err)
	return string(b)
}

// Read-before-write: the user's edit made after the model read a file, saved
// with :w in Neovim or written by another program, is never overwritten; the
// model is told to read the file again; a file never read is not overwritten;
// the model's own read → patch → patch sequence still works.
func TestE2EReadBeforeWriteGuard(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "a.txt")
	require.NoError(t, os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("never read\n"), 0o644))
	f.turn(t, "read a.txt", "r1", "read_file", `{"path":"a.txt"}`)

	// The user edits and saves in Neovim.
	require.NoError(t, f.Command("edit "+path))
	require.NoError(t, f.Command("normal! Goadded by the user"))
	require.NoError(t, f.Command("write"))
	f.turn(t, "rewrite a.txt", "p1", "patch", `{"operations":[{"path":"a.txt","content":"the model's version\n"}]}`)
	assert.Equal(t, "alpha\nbeta\nadded by the user\n", f.disk(t, "a.txt"), "the user's :w is kept byte for byte")
	res := f.lastTool(t)
	assert.Contains(t, res, "a.txt changed on disk since you last read it")
	assert.Contains(t, res, "Read a.txt again")

	// Another program writes it; a search/replace is refused as well.
	outside := "alpha\nbeta\nadded by the user\r\nfrom outside\n"
	require.NoError(t, os.WriteFile(path, []byte(outside), 0o644))
	f.turn(t, "fix beta", "p2", "patch", `{"operations":[{"path":"a.txt","search":"beta","replace":"BETA"}]}`)
	assert.Equal(t, outside, f.disk(t, "a.txt"))
	assert.Contains(t, f.lastTool(t), "Read a.txt again")

	// Overwriting a file never read in this conversation is refused.
	f.turn(t, "rewrite b.txt", "p3", "patch", `{"operations":[{"path":"b.txt","content":"clobbered\n"}]}`)
	assert.Equal(t, "never read\n", f.disk(t, "b.txt"))
	assert.Contains(t, f.lastTool(t), "read it before overwriting it")

	// read → patch → patch, all by the model, in one turn.
	calls := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("r2", "read_file", `{"path":"a.txt"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("p4", "patch", `{"operations":[{"path":"a.txt","search":"beta","replace":"BETA"}]}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("p5", "patch", `{"operations":[{"path":"a.txt","content":"final\n"}]}`, 1).Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido read and rewrite a.txt"))
	f.waitIdleAfter(t, calls+4)
	assert.NotContains(t, f.lastTool(t), "error")
	assert.Equal(t, "final\n", f.disk(t, "a.txt"))
}

// reviewUI replaces vim.ui.select/input: each select is recorded with the
// text of the question's detail float (the diff) at that moment and answered
// from _G.answers (nil: dismissed, as <Esc>); "hold" keeps the picker open
// until the test answers.
const reviewUI = `_G.asked, _G.answers, _G.held = {}, {}, {}
vim.ui.select = function(items, opts, cb)
  local q = require("fido.questions").current()
  local w = q and q.detail_win
  local shown = w and vim.api.nvim_win_is_valid(w)
    and table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n") or ""
  table.insert(_G.asked, { prompt = opts.prompt, items = items, preview = shown })
  local a = table.remove(_G.answers, 1)
  if a == "hold" then table.insert(_G.held, { items = items, cb = cb }) return end
  for i, it in ipairs(items) do if it == a then return cb(it, i) end end
  cb(nil, nil)
end
vim.ui.input = function(opts, cb) cb("too risky") end
function _G.answer_held(choice)
  local h = table.remove(_G.held, 1)
  for i, it in ipairs(h.items) do if it == choice then return h.cb(it, i) end end
end`

type askedPicker struct {
	Prompt  string   `msgpack:"prompt"`
	Items   []string `msgpack:"items"`
	Preview string   `msgpack:"preview"`
}

func (f *fido) asked(t *testing.T) []askedPicker {
	var asked []askedPicker
	f.Lua(t, &asked, `return _G.asked`)
	return asked
}

// /edits review: every patch, rm and rmdir shows its diff and asks with the
// four choices; each choice and <Esc> does what it says on disk and tells the
// model; "Apply all this turn" stops asking for the rest of the turn.
func TestE2EEditReviewChoices(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "old.txt"), []byte("old\n"), 0o644))
	f.Lua(t, nil, `require("fido").setup({ edits = "review" })`)
	f.Lua(t, nil, reviewUI)
	f.Lua(t, nil, `_G.answers = { "Apply" }`)
	f.turn(t, "edit", "p1", "patch", `{"operations":[{"path":"a.txt","search":"one","replace":"ONE"},{"path":"n.txt","content":"fresh\n"}]}`)
	assert.True(t, f.Bool(t, `require("fido").status().edits == "review" and require("fido").statusline():find("review", 1, true) ~= nil`))
	asked := f.asked(t)
	require.Len(t, asked, 1)
	assert.Equal(t, []string{"Reject", "Reject with reason…", "Apply", "Apply all this turn"}, asked[0].Items, "Reject first: a stray <CR> applies nothing")
	assert.Contains(t, asked[0].Prompt, "a.txt, new n.txt")
	for _, want := range []string{"--- a/a.txt", "-one", "+ONE", "new file", "+++ b/n.txt", "+fresh"} {
		assert.Contains(t, asked[0].Preview, want)
	}
	assert.Equal(t, "ONE\n", f.disk(t, "a.txt"))
	assert.Equal(t, "fresh\n", f.disk(t, "n.txt"))
	f.WaitFor(t, `require("fido.questions").current() == nil`, 5*time.Second)

	change := `{"operations":[{"path":"a.txt","search":"ONE","replace":"two"}]}`
	f.Lua(t, nil, `_G.answers = { "Reject" }`)
	f.turn(t, "edit", "p2", "patch", change)
	assert.Equal(t, "ONE\n", f.disk(t, "a.txt"))
	assert.Contains(t, f.lastTool(t), "The user rejected this change; nothing was written.")

	f.Lua(t, nil, `_G.answers = { "Reject with reason…" }`)
	f.turn(t, "edit", "p3", "patch", change)
	assert.Equal(t, "ONE\n", f.disk(t, "a.txt"))
	assert.Contains(t, f.lastTool(t), "Their reason: too risky")

	f.Lua(t, nil, `_G.answers = { "<Esc>" }`)
	f.turn(t, "delete", "r1", "rm", `{"path":"old.txt"}`)
	assert.Equal(t, "old\n", f.disk(t, "old.txt"), "<Esc> rejects")
	assert.Contains(t, f.lastTool(t), "rejected")
	asked = f.asked(t)
	require.Len(t, asked, 4)
	assert.Contains(t, asked[3].Preview, "deleted file")
	assert.Contains(t, asked[3].Preview, "-old")

	// Apply all this turn: the second change of the turn is not asked.
	calls := len(f.srv.Requests())
	f.Lua(t, nil, `_G.answers = { "Apply all this turn" }`)
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("p4", "patch", change, 1).ToolCall("r2", "rm", `{"path":"old.txt"}`, 1).Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido do both"))
	f.waitIdleAfter(t, calls+2)
	assert.Len(t, f.asked(t), 5)
	assert.Equal(t, "two\n", f.disk(t, "a.txt"))
	assert.NoFileExists(t, filepath.Join(f.Dir, "old.txt"))

	// The next turn asks again.
	f.Lua(t, nil, `_G.answers = { "Reject" }`)
	f.turn(t, "edit", "p5", "patch", `{"operations":[{"path":"a.txt","search":"two","replace":"three"}]}`)
	assert.Len(t, f.asked(t), 6)
	assert.Equal(t, "two\n", f.disk(t, "a.txt"))

	// /edits auto: no more questions.
	require.NoError(t, f.Command("Fido /edits auto"))
	f.WaitFor(t, `require("fido").status().edits == "auto"`, 5*time.Second)
	f.turn(t, "edit", "p6", "patch", `{"operations":[{"path":"a.txt","search":"two","replace":"three"}]}`)
	assert.Len(t, f.asked(t), 6)
	assert.Equal(t, "three\n", f.disk(t, "a.txt"))
}

// Two edits in one reply are asked one after the other, never two pickers at
// once; cancelling while a picker is open ends the turn with every tool call
// answered (the pending edit reported as not applied) and nothing written.
func TestE2EEditReviewQueueAndCancel(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte("one\n"), 0o644))
	f.Lua(t, nil, reviewUI)
	require.NoError(t, f.Command("Fido /edits review"))
	f.WaitFor(t, `require("fido").status().edits == "review"`, 5*time.Second)
	f.Lua(t, nil, `_G.answers = { "hold", "hold" }`)
	calls := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().
			ToolCall("q1", "patch", `{"operations":[{"path":"a.txt","search":"one","replace":"ONE"}]}`, 1).
			ToolCall("q2", "patch", `{"operations":[{"path":"b.txt","content":"b\n"}]}`, 1).
			Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido two edits"))
	f.WaitFor(t, `#_G.held == 1`, 5*time.Second)
	time.Sleep(300 * time.Millisecond)
	assert.True(t, f.Bool(t, `#_G.asked == 1`), "the second edit waits for the first answer")
	f.Lua(t, nil, `_G.answer_held("Apply")`)
	f.WaitFor(t, `#_G.asked == 2 and #_G.held == 1`, 5*time.Second)
	assert.Contains(t, f.asked(t)[1].Preview, "+++ b/b.txt")
	f.Lua(t, nil, `_G.answer_held("Apply")`)
	f.waitIdleAfter(t, calls+2)
	assert.Equal(t, "ONE\n", f.disk(t, "a.txt"))
	assert.Equal(t, "b\n", f.disk(t, "b.txt"))

	// Cancel while the picker is open.
	f.Lua(t, nil, `_G.answers = { "hold" }; _G.held = {}`)
	calls = len(f.srv.Requests())
	f.srv.Enqueue(llmtest.Reply().ToolCall("c1", "patch", `{"operations":[{"path":"a.txt","search":"ONE","replace":"gone"}]}`, 1).Finish("tool_calls"))
	require.NoError(t, f.Command("Fido change it"))
	f.WaitFor(t, `#_G.held == 1`, 5*time.Second)
	require.NoError(t, f.Command("FidoCancel"))
	f.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second)
	f.WaitFor(t, `require("fido.questions").current() == nil`, 5*time.Second)
	f.Lua(t, nil, `_G.answer_held("Apply")`) // a late answer changes nothing
	f.srv.Enqueue(llmtest.Text("ok"))
	require.NoError(t, f.Command("Fido next"))
	f.waitIdleAfter(t, calls+2)
	assert.Equal(t, "ONE\n", f.disk(t, "a.txt"), "the pending edit was not applied")
	msgs := f.srv.Requests()[calls+1].Get("messages").Array()
	var answered bool
	for i, m := range msgs {
		if m.Get("tool_calls.0.id").String() == "c1" {
			require.Greater(t, len(msgs), i+1)
			next := msgs[i+1]
			assert.Equal(t, "tool", next.Get("role").String())
			assert.Equal(t, "c1", next.Get("tool_call_id").String())
			assert.Contains(t, next.Get("content").String(), "not applied")
			answered = true
		}
	}
	assert.True(t, answered, "the cancelled call is answered in the next request")
}

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// :FidoReview after a turn that changed two places of a.txt and created
// n.txt: a tab with a 3-entry quickfix list and the file beside its
// before-state in diff mode; :FidoRevert on hunk 1 restores it and keeps hunk
// 2 and the user's later edit; :FidoRevert! deletes the created file; the
// next request tells the model what was reverted.
func TestE2EFidoReviewAndRevert(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte(numberedLines(20)), 0o644))
	f.turn(t, "edit", "p1", "patch", `{"operations":[`+
		`{"path":"a.txt","search":"line 2\n","replace":"LINE 2\nextra\n"},`+
		`{"path":"a.txt","search":"line 15\n","replace":"LINE 15\n"},`+
		`{"path":"n.txt","content":"new\n"}]}`)
	require.NoError(t, f.Command("FidoReview"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and vim.fn.getqflist({ size = 0 }).size == 3`, 5*time.Second,
		`vim.fn.getqflist()`, `_G.fido_notes`)
	var qf struct {
		Title string `msgpack:"title"`
		Items []struct {
			Lnum int    `msgpack:"lnum"`
			Text string `msgpack:"text"`
		} `msgpack:"items"`
	}
	f.Lua(t, &qf, `return vim.fn.getqflist({ title = 1, items = 1 })`)
	assert.Equal(t, "Fido review", qf.Title)
	require.Len(t, qf.Items, 3)
	assert.Equal(t, 2, qf.Items[0].Lnum)
	assert.Equal(t, "+2 -1", qf.Items[0].Text)
	assert.Equal(t, "+1 -1", qf.Items[1].Text)
	assert.Contains(t, qf.Items[2].Text, "new file")
	diffWins := `(function()
		local n = 0
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.wo[w].diff then n = n + 1 end
		end
		return n == 2 end)()`
	f.WaitFor(t, diffWins, 5*time.Second)
	// Opening it again replaces the review (one tab, still paired).
	f.Lua(t, nil, `_G.old_tab = require("fido.review").tab()`)
	require.NoError(t, f.Command("FidoReview"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and require("fido.review").tab() ~= _G.old_tab and #vim.api.nvim_list_tabpages() == 2`, 5*time.Second)
	f.WaitFor(t, diffWins, 5*time.Second)
	assert.True(t, f.Bool(t, `vim.fn.expand("%:t") == "a.txt" and vim.fn.line(".") == 2`), "the cursor is on hunk 1")
	assert.True(t, f.Bool(t, `vim.fn.bufnr("fido://review/a.txt") > 0 and vim.fn.getbufline(vim.fn.bufnr("fido://review/a.txt"), 2)[1] == "line 2"`))

	// <CR> in the list shows the entry's file beside its own before-state.
	f.Lua(t, nil, `for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
		if vim.bo[vim.api.nvim_win_get_buf(w)].buftype == "quickfix" then vim.api.nvim_set_current_win(w) end
	end
	vim.api.nvim_win_set_cursor(0, { 3, 0 })
	vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)`)
	pairedWith := func(file string) string {
		return `(function()
		local names = {}
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.wo[w].diff then table.insert(names, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)), ":t")) end
		end
		table.sort(names)
		return #names == 2 and names[1] == "` + file + `" and names[2] == "` + file + `" end)()`
	}
	f.WaitFor(t, pairedWith("n.txt"), 5*time.Second)
	// :cprev (what ]q/[q map to) goes back to a.txt's second hunk.
	require.NoError(t, f.Command("wincmd p"))
	require.NoError(t, f.Command("cprev"))
	f.WaitFor(t, pairedWith("a.txt")+` and vim.fn.line(".") == 16`, 5*time.Second, `vim.fn.line(".")`)
	require.NoError(t, f.Command("cfirst"))

	// The user edits elsewhere and saves, then reverts hunk 1.
	require.NoError(t, f.Command(`call setline(21, "line 20 (user)")`))
	require.NoError(t, f.Command("write"))
	require.NoError(t, f.Command("call cursor(2, 1)"))
	require.NoError(t, f.Command("FidoRevert too noisy"))
	want := strings.Replace(strings.Replace(numberedLines(20), "line 15\n", "LINE 15\n", 1), "line 20\n", "line 20 (user)\n", 1)
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 2`, 5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	assert.Equal(t, want, f.disk(t, "a.txt"))
	f.WaitFor(t, `vim.fn.getline(2) == "line 2"`, 5*time.Second, `vim.fn.getline(1, "$")`)

	// The created file: :FidoRevert! deletes it.
	require.NoError(t, f.Command("cnext"))
	f.WaitFor(t, `vim.fn.expand("%:t") == "n.txt"`, 5*time.Second)
	require.NoError(t, f.Command("FidoRevert!"))
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 1`, 5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	assert.NoFileExists(t, filepath.Join(f.Dir, "n.txt"))

	// q closes the tab.
	f.Lua(t, nil, `vim.api.nvim_feedkeys("q", "mx", false)`)
	f.WaitFor(t, `require("fido.review").tab() == nil and #vim.api.nvim_list_tabpages() == 1`, 5*time.Second)

	calls := len(f.srv.Requests())
	f.srv.Enqueue(llmtest.Text("noted"))
	require.NoError(t, f.Command("Fido go on"))
	f.waitIdleAfter(t, calls+1)
	msgs := f.srv.Requests()[calls].Get("messages").Array()
	last := msgs[len(msgs)-1]
	assert.Equal(t, "user", last.Get("role").String())
	assert.Contains(t, last.Get("content").String(), "go on")
	assert.Contains(t, last.Get("content").String(), "user reverted: a.txt lines 2-3 (reason: too noisy); n.txt the file Fido created (deleted it)")
	sys := msgs[0].Get("content").String()
	assert.NotContains(t, sys, "reverted")
}

// /rewind to the second of three file-changing turns with "Conversation and
// files": the files are as after turn 1 (a file where the user edited
// Fido's line since is skipped and named), the next request ends before the
// second message, and its text is back in the input.
func TestE2ERewindConversationAndFiles(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte("v0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("b0\n"), 0o644))
	f.turn(t, "first change", "p1", "patch", `{"operations":[{"path":"a.txt","search":"v0","replace":"v1"}]}`)
	f.turn(t, "second change", "p2", "patch", `{"operations":[{"path":"a.txt","search":"v1","replace":"v2"},{"path":"c.txt","content":"c\n"}]}`)
	f.turn(t, "third change", "p3", "patch", `{"operations":[{"path":"b.txt","search":"b0","replace":"b3"}]}`)
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("b3 and the user\n"), 0o644))

	f.Lua(t, nil, `_G.asked = {}
vim.ui.select = function(items, opts, cb)
  local q = require("fido.questions").current()
  table.insert(_G.asked, { prompt = opts.prompt, items = items, detail = q and q.detail or "" })
  if #_G.asked == 1 then
    for i, it in ipairs(items) do if it:find("^second change") then return cb(it, i) end end
  end
  for i, it in ipairs(items) do if it == "Conversation and files" then return cb(it, i) end end
  cb(nil, nil)
end`)
	require.NoError(t, f.Command("Fido /rewind"))
	f.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "second change"`, 5*time.Second,
		`_G.asked`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), -8, -1, false)`)
	var asked []struct {
		Prompt string   `msgpack:"prompt"`
		Items  []string `msgpack:"items"`
		Detail string   `msgpack:"detail"`
	}
	f.Lua(t, &asked, `return _G.asked`)
	require.Len(t, asked, 2)
	require.Len(t, asked[0].Items, 3)
	assert.True(t, strings.HasPrefix(asked[0].Items[0], "third change"), "newest first")
	assert.Contains(t, asked[0].Items[1], "changed after it: b.txt, c.txt, a.txt")
	assert.Equal(t, []string{"Cancel", "Conversation only", "Files only", "Conversation and files"}, asked[1].Items, "the choice that restores the least first")
	assert.Equal(t, "Rewind to before “second change”?", asked[1].Prompt, "a short prompt; the picker cuts nothing")
	assert.Contains(t, asked[1].Detail, "  second change\n", "the whole message")
	assert.Contains(t, asked[1].Detail, "restore:\n  a.txt\n  c.txt (delete)\n", "every file on its own line")
	assert.Contains(t, asked[1].Detail, "Skipped (never overwritten):\n  b.txt: line 1 was edited after Fido's change")

	assert.Equal(t, "v1\n", f.disk(t, "a.txt"))
	assert.NoFileExists(t, filepath.Join(f.Dir, "c.txt"))
	assert.Equal(t, "b3 and the user\n", f.disk(t, "b.txt"), "the user's edit is never overwritten")
	text := f.transcript(t)
	assert.Contains(t, text, "will skip (never overwritten): b.txt: line 1 was edited after Fido's change (kept as it is)")
	assert.Contains(t, text, "restored a.txt")
	assert.Contains(t, text, "deleted c.txt")
	assert.Contains(t, text, "the plan is left as it is")

	calls := len(f.srv.Requests())
	f.srv.Enqueue(llmtest.Text("ok"))
	require.NoError(t, f.Command("Fido second change, differently"))
	f.waitIdleAfter(t, calls+1)
	var users []string
	for _, m := range f.srv.Requests()[calls].Get("messages").Array() {
		if m.Get("role").String() == "user" {
			users = append(users, m.Get("content").String())
		}
	}
	assert.Equal(t, []string{"first change", "second change, differently"}, users)
}

// What the conversation saw survives a restart of the host for a resumed
// conversation: /suspend, a new Neovim and host, /recall; an overwrite of the
// file read before the restart is allowed, a change made meanwhile refused.
func TestE2EReadBeforeWriteSurvivesRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "b.txt"), []byte("two\n"), 0o644))
	f1 := startFido(t, state, ws)
	f1.turn(t, "read a", "r1", "read_file", `{"path":"a.txt"}`)
	f1.turn(t, "read b", "r2", "read_file", `{"path":"b.txt"}`)
	require.NoError(t, f1.Command("Fido /suspend before lunch"))
	f1.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("suspended", 1, true) ~= nil`, 5*time.Second)
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "b.txt"), []byte("two, edited during lunch\n"), 0o644))

	f2 := startFido(t, state, ws)
	f2.Lua(t, nil, `vim.ui.select = function(items, opts, cb) cb(items[1], 1) end`)
	require.NoError(t, f2.Command("Fido /recall"))
	f2.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("recalled", 1, true) ~= nil`, 10*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	f2.turn(t, "rewrite a", "p1", "patch", `{"operations":[{"path":"a.txt","content":"ONE\n"}]}`)
	assert.NotContains(t, f2.lastTool(t), "error")
	assert.Equal(t, "ONE\n", f2.disk(t, "a.txt"))
	f2.turn(t, "rewrite b", "p2", "patch", `{"operations":[{"path":"b.txt","content":"TWO\n"}]}`)
	assert.Contains(t, f2.lastTool(t), "b.txt changed on disk since you last read it")
	assert.Equal(t, "two, edited during lunch\n", f2.disk(t, "b.txt"))
}

// In the review's quickfix list, gr reverts the hunk of the entry under the
// cursor; the keymaps follow setup({ review = { keymaps } }).
func TestE2EReviewKeymapInList(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte(numberedLines(10)), 0o644))
	f.Lua(t, nil, `require("fido").setup({ review = { keymaps = { hunk = "<Space>r", close = false } } })`)
	f.turn(t, "edit", "p1", "patch", `{"operations":[{"path":"a.txt","search":"line 2\n","replace":"LINE 2\n"},{"path":"a.txt","search":"line 9\n","replace":"LINE 9\n"}]}`)
	require.NoError(t, f.Command("FidoReview"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and vim.fn.getqflist({ size = 0 }).size == 2`, 5*time.Second)
	f.Lua(t, nil, `for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
		if vim.bo[vim.api.nvim_win_get_buf(w)].buftype == "quickfix" then vim.api.nvim_set_current_win(w) end
	end
	vim.api.nvim_win_set_cursor(0, { 2, 0 })`)
	assert.True(t, f.Bool(t, `vim.fn.maparg("q", "n", false, true).buffer ~= 1`), "close = false: no q mapping")
	f.Lua(t, nil, `vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Space>r", true, false, true), "mx", false)`)
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 1`, 5*time.Second, `_G.fido_notes`)
	assert.Equal(t, strings.Replace(numberedLines(10), "line 2\n", "LINE 2\n", 1), f.disk(t, "a.txt"), "the second entry's hunk was reverted")
}
