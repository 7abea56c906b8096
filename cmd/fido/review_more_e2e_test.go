package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// More end-to-end tests of reviewing and rewinding Fido's file changes:
// :FidoReview all, the default gR keymap, /rewind "Conversation only", and
// the buffers and times of a /rewind that restores files.

// reviewQF is the review's quickfix list: its title and entries.
type reviewQF struct {
	Title string `msgpack:"title"`
	Items []struct {
		Bufnr int    `msgpack:"bufnr"`
		Lnum  int    `msgpack:"lnum"`
		Text  string `msgpack:"text"`
	} `msgpack:"items"`
}

// reviewEntries is the quickfix list as "file:line: text" lines.
func (f *fido) reviewEntries(t *testing.T) (string, []string) {
	t.Helper()
	var qf reviewQF
	f.Lua(t, &qf, `return vim.fn.getqflist({ title = 1, items = 1 })`)
	var out []string
	for _, it := range qf.Items {
		var name string
		f.Lua(t, &name, `return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(...), ":t")`, it.Bufnr)
		out = append(out, fmt.Sprintf("%s:%d: %s", name, it.Lnum, it.Text))
	}
	return qf.Title, out
}

// userMessagesOf are the user messages of request i, in order.
func (f *fido) userMessagesOf(t *testing.T, i int) []string {
	t.Helper()
	var users []string
	for _, m := range f.srv.Requests()[i].Get("messages").Array() {
		if m.Get("role").String() == "user" {
			users = append(users, m.Get("content").String())
		}
	}
	return users
}

// writeWorkspaceFile writes content to dir/rel.
func writeWorkspaceFile(dir, rel, content string) error {
	return os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644)
}

// rewoundInput is the input buffer's text.
func (f *fido) rewoundInput(t *testing.T) []string {
	t.Helper()
	return f.Lines(t, "fido://input")
}

// :FidoReview shows only the newest turn that changed files; :FidoReview all
// lists every hunk of every file changed in the conversation, earlier turns
// included (a file changed in two turns beside its content before the first,
// a file created in turn 1 as a new file); a revert in the whole-conversation
// review reaches an earlier turn's hunk and the refreshed list stays whole.
func TestE2EFidoReviewAllListsEarlierTurns(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, writeWorkspaceFile(f.Dir, "a.txt", numberedLines(12)))
	require.NoError(t, writeWorkspaceFile(f.Dir, "b.txt", "b0\n"))
	f.turn(t, "first", "p1", "patch", `{"operations":[`+
		`{"path":"a.txt","search":"line 2\n","replace":"LINE 2\n"},`+
		`{"path":"n.txt","content":"new\n"}]}`)
	f.turn(t, "second", "p2", "patch", `{"operations":[`+
		`{"path":"a.txt","search":"line 9\n","replace":"LINE 9\n"},`+
		`{"path":"b.txt","search":"b0","replace":"b1"}]}`)
	f.turn(t, "third, no change", "r1", "read_file", `{"path":"b.txt"}`)

	// Without all: the newest turn that changed files (turn 2) only.
	require.NoError(t, f.Command("FidoReview"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and vim.fn.getqflist({ size = 0 }).size == 2`, 5*time.Second,
		`vim.fn.getqflist()`, `_G.fido_notes`)
	_, newest := f.reviewEntries(t)
	assert.Equal(t, []string{"a.txt:9: +1 -1", "b.txt:1: +1 -1"}, newest)
	assert.True(t, f.Bool(t, `vim.fn.getbufline(vim.fn.bufnr("fido://review/a.txt"), 2)[1] == "LINE 2"`),
		"the newest turn's before-state of a.txt already has turn 1's change")

	// all: every turn's changes, in file order, in a new review.
	f.Lua(t, nil, `_G.old_tab = require("fido.review").tab()`)
	require.NoError(t, f.Command("FidoReview all"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and require("fido.review").tab() ~= _G.old_tab and vim.fn.getqflist({ size = 0 }).size == 4`,
		5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	title, all := f.reviewEntries(t)
	assert.Equal(t, "Fido review", title)
	assert.Equal(t, []string{"a.txt:2: +1 -1", "a.txt:9: +1 -1", "b.txt:1: +1 -1", "n.txt:1: +1 -0 (new file)"}, all)
	assert.Len(t, f.Lines(t, "fido://review/a.txt"), 12)
	assert.True(t, f.Bool(t, `vim.fn.getbufline(vim.fn.bufnr("fido://review/a.txt"), 2)[1] == "line 2"`),
		"a.txt beside its content before the conversation's first change")
	f.WaitFor(t, `(function()
		local n = 0
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			if vim.wo[w].diff then n = n + 1 end
		end
		return n == 2 end)()`, 5*time.Second)
	assert.True(t, f.Bool(t, `vim.fn.expand("%:t") == "a.txt" and vim.fn.line(".") == 2`), "the cursor is on turn 1's hunk")

	// Reverting turn 1's hunk from the whole-conversation review.
	require.NoError(t, f.Command("FidoRevert"))
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 3`, 5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	_, after := f.reviewEntries(t)
	assert.Equal(t, []string{"a.txt:9: +1 -1", "b.txt:1: +1 -1", "n.txt:1: +1 -0 (new file)"}, after, "the refreshed list is still the whole conversation's")
	assert.Equal(t, strings.Replace(numberedLines(12), "line 9\n", "LINE 9\n", 1), f.disk(t, "a.txt"))
}

// The default gR (no review keymaps configured) reverts the whole file, as
// doc/fido.txt says, from each of the review's windows: the file itself, its
// before-state and the quickfix list; the model hears of all three.
func TestE2EReviewDefaultFileKeymap(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, writeWorkspaceFile(f.Dir, "a.txt", numberedLines(10)))
	require.NoError(t, writeWorkspaceFile(f.Dir, "b.txt", "b0\n"))
	f.turn(t, "edit", "p1", "patch", `{"operations":[`+
		`{"path":"a.txt","search":"line 2\n","replace":"LINE 2\n"},`+
		`{"path":"a.txt","search":"line 9\n","replace":"LINE 9\n"},`+
		`{"path":"b.txt","search":"b0","replace":"b1"},`+
		`{"path":"n.txt","content":"new\n"}]}`)
	require.NoError(t, f.Command("FidoReview"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and vim.fn.getqflist({ size = 0 }).size == 4`, 5*time.Second,
		`vim.fn.getqflist()`, `_G.fido_notes`)
	f.WaitFor(t, `vim.fn.expand("%:t") == "a.txt" and vim.wo.diff`, 5*time.Second)
	var rhs string
	f.Lua(t, &rhs, `return vim.fn.maparg("gR", "n", false, true).rhs or ""`)
	assert.Contains(t, rhs, "FidoRevert!", "gR is mapped by default")
	gR := `vim.api.nvim_feedkeys("gR", "mx", false)`

	// In the file window: both of a.txt's hunks go.
	f.Lua(t, nil, gR)
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 2`, 5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	assert.Equal(t, numberedLines(10), f.disk(t, "a.txt"))
	f.WaitFor(t, `vim.fn.getline(2) == "line 2" and vim.fn.getline(9) == "line 9" and not vim.bo.modified`, 5*time.Second,
		`vim.fn.getline(1, "$")`)

	// In b.txt's before-state (fido://review/b.txt).
	require.NoError(t, f.Command("cfirst"))
	f.WaitFor(t, `vim.fn.expand("%:t") == "b.txt" and vim.fn.bufnr("fido://review/b.txt") > 0
		and vim.fn.bufwinid(vim.fn.bufnr("fido://review/b.txt")) > 0`, 5*time.Second, `vim.fn.expand("%")`)
	f.Lua(t, nil, `vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr("fido://review/b.txt")))`)
	f.Lua(t, nil, gR)
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 1`, 5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	assert.Equal(t, "b0\n", f.disk(t, "b.txt"))

	// In the list, on n.txt's entry: the file Fido created is deleted.
	f.Lua(t, nil, `for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
		if vim.bo[vim.api.nvim_win_get_buf(w)].buftype == "quickfix" then vim.api.nvim_set_current_win(w) end
	end
	vim.api.nvim_win_set_cursor(0, { 1, 0 })`)
	require.True(t, f.Bool(t, `vim.bo.buftype == "quickfix"`))
	f.Lua(t, nil, gR)
	f.WaitFor(t, `vim.fn.getqflist({ size = 0 }).size == 0`, 5*time.Second, `vim.fn.getqflist()`, `_G.fido_notes`)
	assert.NoFileExists(t, filepath.Join(f.Dir, "n.txt"))

	calls := len(f.srv.Requests())
	f.srv.Enqueue(llmtest.Text("noted"))
	require.NoError(t, f.Command("Fido go on"))
	f.waitIdleAfter(t, calls+1)
	users := f.userMessagesOf(t, calls)
	assert.Contains(t, users[len(users)-1], "user reverted: a.txt the whole file, as it was before Fido's changes; "+
		"b.txt the whole file, as it was before Fido's changes; n.txt the file Fido created (deleted it)")
}

// rewindUI answers /rewind's two pickers: the message whose label starts
// with _G.pick, then _G.mode; every question is recorded in _G.asked.
const rewindUI = `_G.asked = {}
vim.ui.select = function(items, opts, cb)
  table.insert(_G.asked, { prompt = opts.prompt, items = items })
  local want = #_G.asked == 1 and _G.pick or _G.mode
  for i, it in ipairs(items) do
    if it == want or (#_G.asked == 1 and it:sub(1, #want) == want) then return cb(it, i) end
  end
  cb(nil, nil)
end`

type rewindAsked struct {
	Prompt string   `msgpack:"prompt"`
	Items  []string `msgpack:"items"`
}

// /rewind "Conversation only": the conversation goes back to just before the
// chosen message and its text is back in the input, while every file stays
// as Fido left it (a changed file, a created one) and the transcript reports
// no file restored; the next request has no trace of the dropped turns.
func TestE2ERewindConversationOnly(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, writeWorkspaceFile(f.Dir, "a.txt", "v0\n"))
	f.turn(t, "first change", "p1", "patch", `{"operations":[{"path":"a.txt","search":"v0","replace":"v1"}]}`)
	f.turn(t, "second change", "p2", "patch", `{"operations":[{"path":"a.txt","search":"v1","replace":"v2"},{"path":"c.txt","content":"c\n"}]}`)
	f.turn(t, "third-turn-question", "r1", "read_file", `{"path":"c.txt"}`)
	before := f.transcript(t)

	f.Lua(t, nil, rewindUI)
	f.Lua(t, nil, `_G.pick, _G.mode = "second change", "Conversation only"`)
	require.NoError(t, f.Command("Fido /rewind"))
	f.WaitFor(t, `table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("rewound the conversation", 1, true) ~= nil`,
		5*time.Second, `_G.asked`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), -8, -1, false)`)
	f.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "second change"`, 5*time.Second,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	assert.Equal(t, []string{"second change"}, f.rewoundInput(t), "the message's text is back in the input")

	var asked []rewindAsked
	f.Lua(t, &asked, `return _G.asked`)
	require.Len(t, asked, 2)
	require.Len(t, asked[0].Items, 3)
	assert.Equal(t, []string{"Cancel", "Conversation only", "Files only", "Conversation and files"}, asked[1].Items, "the choice that restores the least first")

	// The files are not touched.
	time.Sleep(300 * time.Millisecond) // room for a (wrong) file rewind to land
	assert.Equal(t, "v2\n", f.disk(t, "a.txt"))
	assert.Equal(t, "c\n", f.disk(t, "c.txt"))
	added := strings.TrimPrefix(f.transcript(t), before)
	assert.Contains(t, added, "rewound the conversation to before “second change” (")
	assert.Contains(t, added, "the plan is left as it is")
	for _, never := range []string{"restored a.txt", "deleted c.txt", "rewind: will restore", "no file needed restoring"} {
		assert.NotContains(t, added, never, "no file rewind was done")
	}

	// The next request ends before the chosen message; the turns after it are
	// gone (their tool calls too).
	calls := len(f.srv.Requests())
	f.srv.Enqueue(llmtest.Text("ok"))
	require.NoError(t, f.Command("Fido second change, differently"))
	f.waitIdleAfter(t, calls+1)
	assert.Equal(t, []string{"first change", "second change, differently"}, f.userMessagesOf(t, calls))
	body := string(f.srv.Requests()[calls].Body)
	assert.Contains(t, body, `"p1"`)
	for _, gone := range []string{`"p2"`, `"r1"`, "third-turn-question"} {
		assert.NotContains(t, body, gone)
	}
	assert.Equal(t, "v2\n", f.disk(t, "a.txt"), "still as Fido left it")

	// The model, now knowing a.txt only as v1, cannot overwrite the v2 on disk.
	f.turn(t, "rewrite a.txt", "p3", "patch", `{"operations":[{"path":"a.txt","content":"v3\n"}]}`)
	assert.Equal(t, "v2\n", f.disk(t, "a.txt"))
	assert.Contains(t, f.lastTool(t), "not applied")
}

// /rewind's picker shows each message with its time (HH:MM in the local time
// zone, not UTC) and the files changed after it; restoring files reloads the
// buffers open on them, shown in a window or hidden, with no unsaved change
// left. "Files only" leaves the conversation and the input as they were.
func TestE2ERewindReloadsBuffersAndShowsTimes(t *testing.T) {
	const zone = "Asia/Kathmandu" // UTC+05:45: never the UTC clock
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	f := startFidoEnv(t, "", []string{"TZ=" + zone})
	require.NoError(t, writeWorkspaceFile(f.Dir, "a.txt", "a0\n"))
	require.NoError(t, writeWorkspaceFile(f.Dir, "b.txt", "b0\n"))
	require.NoError(t, f.Command("set hidden"))
	require.NoError(t, f.Command("edit "+filepath.Join(f.Dir, "a.txt")))
	require.NoError(t, f.Command("badd "+filepath.Join(f.Dir, "b.txt")))
	require.NoError(t, f.Command("call bufload(bufnr('b.txt'))"))

	start := time.Now()
	f.turn(t, "first change", "p1", "patch", `{"operations":[{"path":"a.txt","search":"a0","replace":"a1"}]}`)
	f.turn(t, "second change", "p2", "patch", `{"operations":[{"path":"a.txt","search":"a1","replace":"a2"},{"path":"b.txt","search":"b0","replace":"b2"}]}`)
	abuf := fmt.Sprintf("vim.fn.bufnr(%q)", filepath.Join(f.Dir, "a.txt"))
	bbuf := fmt.Sprintf("vim.fn.bufnr(%q)", filepath.Join(f.Dir, "b.txt"))
	show := []string{`vim.fn.getbufline(` + abuf + `, 1, "$")`, `vim.fn.getbufline(` + bbuf + `, 1, "$")`, `_G.fido_notes`}
	f.WaitFor(t, `vim.fn.getbufline(`+abuf+`, 1)[1] == "a2" and vim.fn.getbufline(`+bbuf+`, 1)[1] == "b2"`, 5*time.Second, show...)
	require.True(t, f.Bool(t, `vim.fn.bufwinid(`+abuf+`) > 0 and vim.fn.bufwinid(`+bbuf+`) == -1 and vim.api.nvim_buf_is_loaded(`+bbuf+`)`),
		"a.txt is shown in a window, b.txt loaded but hidden")

	f.Lua(t, nil, rewindUI)
	f.Lua(t, nil, `_G.pick, _G.mode = "second change", "Files only"`)
	require.NoError(t, f.Command("Fido /rewind"))
	f.WaitFor(t, `vim.fn.getbufline(`+abuf+`, 1)[1] == "a1" and vim.fn.getbufline(`+bbuf+`, 1)[1] == "b0"`, 5*time.Second,
		append(show, `_G.asked`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), -8, -1, false)`)...)
	end := time.Now()
	assert.Equal(t, "a1\n", f.disk(t, "a.txt"))
	assert.Equal(t, "b0\n", f.disk(t, "b.txt"))
	assert.True(t, f.Bool(t, `not vim.bo[`+abuf+`].modified and not vim.bo[`+bbuf+`].modified`), "reloaded, not edited")
	assert.Equal(t, []string{"a1"}, f.Lines(t, filepath.Join(f.Dir, "a.txt")))
	assert.Equal(t, []string{"b0"}, f.Lines(t, filepath.Join(f.Dir, "b.txt")))

	// The picker: newest first, each with its time and the files after it.
	var asked []rewindAsked
	f.Lua(t, &asked, `return _G.asked`)
	require.Len(t, asked, 2)
	require.Len(t, asked[0].Items, 2)
	shown := map[string]bool{}
	for m := start.In(loc).Truncate(time.Minute); !m.After(end.In(loc)); m = m.Add(time.Minute) {
		shown[m.Format("15:04")] = true
	}
	label := regexp.MustCompile(`^(.*)  · (\d\d:\d\d)  · (.*)$`)
	for i, want := range [][2]string{{"second change", "changed after it: b.txt, a.txt"}, {"first change", "changed after it: b.txt, a.txt"}} {
		m := label.FindStringSubmatch(asked[0].Items[i])
		require.NotNil(t, m, "label %q has a time", asked[0].Items[i])
		assert.Equal(t, want[0], m[1])
		assert.True(t, shown[m[2]], "label %q shows the local time of the message (one of %v, zone %s)", asked[0].Items[i], shown, zone)
		assert.Equal(t, want[1], m[3])
	}

	// Files only: the conversation and the input are left alone.
	f.waitTranscript(t, "the conversation is unchanged", 5*time.Second)
	text := f.transcript(t)
	assert.Contains(t, text, "restored a.txt")
	assert.Contains(t, text, "restored b.txt")
	assert.Contains(t, text, "the conversation is unchanged")
	assert.NotContains(t, text, "rewound the conversation")
	assert.NotEqual(t, []string{"second change"}, f.rewoundInput(t))
	calls := len(f.srv.Requests())
	f.srv.Enqueue(llmtest.Text("ok"))
	require.NoError(t, f.Command("Fido and now?"))
	f.waitIdleAfter(t, calls+1)
	assert.Equal(t, []string{"first change", "second change", "and now?"}, f.userMessagesOf(t, calls))
}
