package nvim

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// Fido's own question window, with Neovim's default vim.ui.select (a real
// headless Neovim; what the screen shows is in questions_tui_test.go).

func startWindowQuestions(t *testing.T) (*nvimtest.Nvim, func(string)) {
	t.Helper()
	n, srv := startFido(t)
	require.NoError(t, n.Command("Fido"))
	require.True(t, n.Bool(t, `require("fido.questions").select_ui().builtin`), "Neovim's own vim.ui.select")
	return n, func(call string) { approvalTurn(t, n, srv, call, "touch ran.txt") }
}

const questionOpen = `require("fido.questions").current() ~= nil and require("fido.questions").current().phase == "open"`

func ranFile(t *testing.T, n *nvimtest.Nvim) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
	return err == nil
}

// A word typed into the open question (the user started writing the moment
// it took the focus) answers nothing: the question steps aside, every key
// goes where the user was (j and k too, which it had taken as moves), and
// the question waits while they write.
func TestE2EQuestionWindowStepsAsideForTypedKeys(t *testing.T) {
	n, ask := startWindowQuestions(t)
	ask("call_sa")
	n.WaitFor(t, questionOpen, 10*time.Second, `require("fido.questions").current()`)
	keys(t, n, "k")
	keys(t, n, "o")
	keys(t, n, "hello")
	n.WaitFor(t, `vim.api.nvim_get_mode().mode == "i"`, 2*time.Second, `vim.api.nvim_get_mode()`)
	var got []string
	n.Lua(t, &got, `return vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)`)
	assert.Equal(t, []string{"", "hello"}, got, "k (a move in the question) and o went to the input, then the word")
	assert.True(t, n.Bool(t, `require("fido.questions").current() == nil and #require("fido.questions").queued() == 1`),
		"the question waits again, unanswered")
	time.Sleep(1600 * time.Millisecond)
	assert.True(t, n.Bool(t, `require("fido.questions").current() == nil`), "and keeps waiting while the user writes")
	assert.False(t, ranFile(t, n))
	keys(t, n, "<Esc>")
	n.Lua(t, nil, `require("fido.layout").set_input("", false)`)
	n.WaitFor(t, questionOpen, 10*time.Second, `require("fido.questions").current()`)
	keys(t, n, "<CR>") // Deny
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	assert.False(t, ranFile(t, n))
}

// A stray <CR> never approves: not while the question is drawn and waits
// out its guard time (the key goes to the user's window), not as the first
// key once it has the focus (Deny is the current choice), and digits pick
// nothing (the question steps aside).
func TestE2EStrayEnterNeverApproves(t *testing.T) {
	n, ask := startWindowQuestions(t)
	ask("call_cr")
	n.WaitFor(t, `require("fido.questions").current() ~= nil and require("fido.questions").current().phase == "guard"`,
		10*time.Second, `require("fido.questions").current()`)
	keys(t, n, "<CR>")
	time.Sleep(200 * time.Millisecond)
	assert.True(t, n.Bool(t, `require("fido.questions").current() ~= nil and require("fido.questions").current().phase == "guard"`),
		"the <CR> went to the input, not to the question")
	n.WaitFor(t, questionOpen, 5*time.Second, `require("fido.questions").current()`)
	keys(t, n, "3<CR>")
	n.WaitFor(t, `require("fido.questions").current() == nil and #require("fido.questions").queued() == 1`, 2*time.Second,
		`require("fido.questions").current()`)
	assert.False(t, ranFile(t, n), "3<CR> picked nothing")
	n.WaitFor(t, questionOpen, 10*time.Second, `require("fido.questions").current()`)
	var shown []string
	n.Lua(t, &shown, `return require("fido.questions").current().shown`)
	assert.Equal(t, "Deny", shown[0])
	keys(t, n, "<CR>")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	assert.False(t, ranFile(t, n), "the first <CR> denies")
	assert.Contains(t, transcriptText(t, n), "denied by the user")
}

// <Esc> in the question puts it back to wait: it does not come back by
// itself (the statusline says how to answer), and the answer key in the
// transcript opens it again.
func TestE2EQuestionWindowLaterAndTheAnswerKey(t *testing.T) {
	n, ask := startWindowQuestions(t)
	ask("call_l")
	n.WaitFor(t, questionOpen, 10*time.Second, `require("fido.questions").current()`)
	keys(t, n, "<Esc>")
	n.WaitFor(t, `require("fido.questions").current() == nil`, 2*time.Second)
	time.Sleep(1800 * time.Millisecond)
	assert.True(t, n.Bool(t, `require("fido.questions").current() == nil and #require("fido.questions").queued() == 1`),
		"it waits until asked for")
	var line string
	n.Lua(t, &line, `return require("fido").statusline(200)`)
	assert.Contains(t, line, "waiting for approval: ga")
	assert.Equal(t, 1, noteCount(t, n, "an approval waits; ga (normal mode, Fido's windows) or :FidoApprove answers it"))
	n.Lua(t, nil, `vim.api.nvim_set_current_win(require("fido.layout").transcript_win())`)
	keys(t, n, "ga")
	n.WaitFor(t, questionOpen, 2*time.Second, `require("fido.questions").current()`)
	keys(t, n, "jj<CR>") // Run once
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	assert.True(t, ranFile(t, n), "the chosen item ran")
	keys(t, n, "ga") // nothing waits: Vim's own ga (no error)
	assert.NotContains(t, n.Messages(t), "E")
}

// With questions.ui = "select", a picker that leaves too little room for
// the whole command (the fake picker near the top of a 24-line screen, a
// 16-line command) is closed and Fido's window asks instead; one
// notification says so.
func TestE2EPickerWithoutRoomFallsBackToFidosWindow(t *testing.T) {
	n, srv := startQuestions(t)
	cmd := ""
	for i := 0; i < 16; i++ {
		cmd += "echo line\n"
	}
	approvalTurn(t, n, srv, "call_fb", cmd)
	n.WaitFor(t, `fake_count() == 1`, 10*time.Second, `_G.fake.log`)
	n.WaitFor(t, questionOpen+` and require("fido.questions").current().fido`, 5*time.Second, `require("fido.questions").current()`)
	assert.True(t, n.Bool(t, `_G.fake.open == nil or not vim.api.nvim_win_is_valid(_G.fake.open.win)`), "the picker is closed")
	assert.Equal(t, 1, noteCount(t, n, "leaves too little room"))
	keys(t, n, "<CR>")
	assert.Contains(t, lastToolResult(t, srv, 1), "the user denied")
}

// :checkhealth fido says which vim.ui.select asks and whether it shows what
// is asked.
func TestE2ECheckhealthSaysWhichPickerAsks(t *testing.T) {
	n, _ := startFido(t)
	health := func() string {
		require.NoError(t, n.Command("checkhealth fido"))
		var out string
		n.Lua(t, &out, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
		require.NoError(t, n.Command("bwipeout!"))
		return out
	}
	out := health()
	assert.Contains(t, out, "vim.ui.select: Neovim's default (inputlist())")
	assert.Contains(t, out, "every question asks in Fido's own window")
	assert.Contains(t, out, "ga (normal mode, Fido's input and transcript) or :FidoApprove opens the waiting one")
	n.Lua(t, nil, `dofile(...)`, filepath.Join(nvimtest.RepoRoot(t), "nvim", "testdata", "picker.lua"))
	out = health()
	assert.Contains(t, out, "testdata/picker.lua")
	assert.Contains(t, out, "shows no preview of what Fido asks")
	n.Lua(t, nil, `require("fido").setup({ questions = { ui = "select", key = false } })`)
	out = health()
	assert.Contains(t, out, "leaves too little room")
	assert.Contains(t, out, ":FidoApprove opens a waiting question")
}

// The text a choice asks for ("Deny with reason…") follows the answer at
// once, without the quiet second and the guard time of a new question.
func TestE2EReasonFollowsTheAnswerAtOnce(t *testing.T) {
	n, ask := startWindowQuestions(t)
	ask("call_why")
	n.WaitFor(t, questionOpen, 10*time.Second, `require("fido.questions").current()`)
	keys(t, n, "j<CR>") // Deny with reason…
	start := time.Now()
	deadline := start.Add(5 * time.Second)
	for {
		m, err := n.Mode()
		require.NoError(t, err)
		if m.Mode == "c" { // input() on the command line
			break
		}
		require.True(t, time.Now().Before(deadline), "the reason's input never opened: %+v", m)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Less(t, time.Since(start), 700*time.Millisecond, "the input followed the answer")
	keys(t, n, "too risky<CR>")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	assert.Contains(t, transcriptText(t, n), "denied: too risky")
	assert.False(t, ranFile(t, n))
}
