package nvim

import (
	"encoding/json"
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
	"github.com/fido-nvim/fido/nvim/tuitest"
)

// The scenes of issue 31, in the real TUI at 100x30: a user writes their
// next message while Fido asks something. The question must wait, no key
// the user types may answer it, the message must reach the model whole, and
// the question must still be answerable afterwards.

// rmScript is a 7-line script whose sixth line removes the marker directory.
var rmScript = strings.Join([]string{
	"set -e",
	`echo "building in $PWD"`,
	"mkdir -p build",
	"printf 'ok\\n' > build/status",
	"ls build",
	"rm -rf marker",
	"echo done",
}, "\n")

// The message typed while the question arrives, as the model must get it.
const typedMessage = "fix the bug on line 3\nthen run the tests"

// pickerLua is the telescope/fzf-lua-like vim.ui.select of testdata/picker.lua.
func pickerLua(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("dofile(%q)\n", filepath.Join(nvimtest.RepoRoot(t), "nvim", "testdata", "picker.lua"))
}

// tuiFido starts Fido in the TUI on a short workspace path (so the
// question's info line fits one screen line) against a scripted model.
func tuiFido(t *testing.T, init string, prepare func(dir string)) (*tuitest.TUI, *llmtest.Server) {
	t.Helper()
	tuitest.Require(t)
	dir, err := os.MkdirTemp("", "fido-ws")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if prepare != nil {
		prepare(dir)
	}
	srv := llmtest.NewServer(t)
	u := tuitest.Start(t, tuitest.Options{Fido: true, Dir: dir, Init: init, Env: []string{
		"FIDO_BASE_URL=" + srv.URL(), "OPENROUTER_API_KEY=test-key", "FIDO_MODEL=test/model",
	}})
	return u, srv
}

// lastUserText is the newest user message of request i (0-based).
func lastUserText(t *testing.T, srv *llmtest.Server, i int) string {
	t.Helper()
	reqs, err := srv.WaitRequests(i+1, 20*time.Second)
	require.NoError(t, err)
	msgs := reqs[i].Get("messages").Array()
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Get("role").String() == "user" {
			return msgs[j].Get("content").String()
		}
	}
	return ""
}

func lastMessage(t *testing.T, srv *llmtest.Server, i int) string {
	t.Helper()
	reqs, err := srv.WaitRequests(i+1, 20*time.Second)
	require.NoError(t, err)
	msgs := reqs[i].Get("messages").Array()
	return msgs[len(msgs)-1].Get("content").String()
}

// writeWhileAsked is the scene: the user sends "build now", starts the next
// message, pauses 1.6 s while thinking (release lets the question arrive in
// that pause), then finishes the message with " 3⏎then run the tests" and
// sends it. It returns the screen at the end of the pause.
func writeWhileAsked(t *testing.T, u *tuitest.TUI, srv *llmtest.Server, release chan struct{}) string {
	t.Helper()
	u.Keys("i")
	u.Type("build now")
	u.Keys("C-s")
	_, err := srv.WaitRequests(1, 20*time.Second)
	require.NoError(t, err, "build now reached the model")
	u.Type("fix the bug on line")
	close(release)
	u.Pause(1600 * time.Millisecond)
	paused := u.Screen()
	u.Type(" 3")
	u.Keys("Enter")
	u.Type("then run the tests")
	u.Keys("C-s")
	return paused
}

// openQuestion leaves insert mode (the input is empty once the message is
// sent) and waits until the waiting question has the keys.
func openQuestion(t *testing.T, u *tuitest.TUI) {
	t.Helper()
	u.Keys("Escape")
	u.WaitLua(t, `require("fido.questions").current() ~= nil and require("fido.questions").current().phase == "open"`, 15*time.Second)
}

func TestTUIApprovalWaitsWhileTheUserWrites(t *testing.T) {
	for _, tc := range []struct {
		name, init string
		picker     bool // the approval goes to the test picker (questions.ui = "select")
	}{
		{name: "default vim.ui.select"},
		{name: "telescope-like picker", init: "PICKER"},
		{name: "telescope-like picker asks approvals", init: "PICKER" + `require("fido").setup({ questions = { ui = "select" } })`, picker: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			init := strings.ReplaceAll(tc.init, "PICKER", pickerLua(t)) + "\nvim.cmd('Fido')\n"
			u, srv := tuiFido(t, init, func(dir string) {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "marker"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "marker", "keep"), []byte("x"), 0o644))
			})
			release := make(chan struct{})
			args, _ := json.Marshal(map[string]string{"command": rmScript})
			srv.Enqueue(
				llmtest.Reply().Hold(release).ToolCall("call_rm", "bash_exec", string(args), 2).Finish("tool_calls"),
				llmtest.Text("I will not run it."),
				llmtest.Text("Looking at line 3."),
			)
			u.WaitScreen(t, 10*time.Second, "Fido input")
			paused := writeWhileAsked(t, u, srv, release)

			assert.DirExists(t, filepath.Join(u.Dir, "marker"), "the command did not run")
			assert.Contains(t, paused, "waiting for approval", "the statusline says an approval waits")
			u.WaitLua(t, `vim.fn.join(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("approval waits", 1, true) ~= nil`, 5*time.Second)
			var notes int
			require.NoError(t, u.Lua(2*time.Second, &notes, `local n = 0
for _, m in ipairs(vim.split(vim.fn.execute("messages"), "\n")) do if m:find("approval waits", 1, true) then n = n + 1 end end
return n`))
			assert.Equal(t, 1, notes, "one notification says what waits")
			if tc.init != "" {
				var typed []string
				require.NoError(t, u.Lua(2*time.Second, &typed, `return _G.test_picker.typed`))
				assert.Empty(t, typed, "no typed key reached the picker")
			}

			openQuestion(t, u)
			screen := u.Screen()
			for _, l := range strings.Split(rmScript, "\n") {
				assert.Contains(t, screen, l, "the whole command is on screen while it is asked")
			}
			assert.Contains(t, screen, "timeout 120s")
			assert.True(t, strings.Contains(screen, "sandbox: workspace-write") || strings.Contains(screen, "NOT sandboxed"),
				"the sandbox state is on screen")
			assert.Contains(t, screen, u.Dir)
			t.Logf("the screen while the approval is open:\n%s", screen)
			if tc.picker {
				u.WaitLua(t, `#_G.test_picker.opened == 1`, 5*time.Second)
			}
			u.Keys("Enter") // the first item: Deny
			assert.Contains(t, lastMessage(t, srv, 1), "the user denied", "the model was told")
			assert.Equal(t, typedMessage, lastUserText(t, srv, 2), "the message reached the model whole")
			assert.DirExists(t, filepath.Join(u.Dir, "marker"))
		})
	}
}

// The project's .mcp.json makes Fido ask at the first :Fido whether to start
// its server. The user opens Fido, reads for two seconds, presses i and
// types a question: the question reaches the model whole, the server does
// not start, and the trust question is still answerable afterwards.
func TestTUIMCPTrustWaitsWhileTheUserWrites(t *testing.T) {
	for _, tc := range []struct{ name, init string }{
		{name: "default vim.ui.select"},
		{name: "telescope-like picker", init: "PICKER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			init := strings.ReplaceAll(tc.init, "PICKER", pickerLua(t))
			u, srv := tuiFido(t, init, func(dir string) {
				cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
					"probe": map[string]any{"command": "sh", "args": []string{"-c", "touch started; sleep 30"}},
				}})
				require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644))
			})
			srv.Enqueue(llmtest.Text("It prints hello."))
			u.Type(":Fido")
			u.Keys("Enter")
			u.Pause(2 * time.Second) // reading the new windows
			u.Keys("i")
			u.Type("what does main.go do?")
			u.Keys("C-s")
			assert.Equal(t, "what does main.go do?", lastUserText(t, srv, 0), "the question reached the model whole")

			openQuestion(t, u)
			screen := u.Screen()
			assert.Contains(t, screen, "runs: sh -c 'touch started; sleep 30'", "the server's whole command is on screen")
			assert.Contains(t, screen, "sandbox: yes", "how the server will run")
			t.Logf("the screen while the trust question is open:\n%s", screen)
			u.Keys("Enter") // the first item: Not now
			u.WaitLua(t, `vim.fn.join(require("fido.mcp").state.servers or {}, "\n"):find("not trusted", 1, true) ~= nil`, 10*time.Second)
			assert.NoFileExists(t, filepath.Join(u.Dir, "started"), "the server did not start")
		})
	}
}

// ask_user arrives while the user writes their next message: it waits, and
// is answered afterwards; the message and the answer both reach the model.
func TestTUIAskUserWaitsWhileTheUserWrites(t *testing.T) {
	for _, tc := range []struct {
		name, init string
		picker     bool
	}{
		{name: "default vim.ui.select"},
		{name: "telescope-like picker", init: "PICKER"},
		{name: "telescope-like picker asks", init: "PICKER" + `require("fido").setup({ questions = { ui = "select" } })`, picker: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			init := strings.ReplaceAll(tc.init, "PICKER", pickerLua(t)) + "\nvim.cmd('Fido')\n"
			u, srv := tuiFido(t, init, nil)
			release := make(chan struct{})
			srv.Enqueue(
				llmtest.Reply().Hold(release).ToolCall("call_ask", "ask_user",
					`{"question":"Which database should the cache use?","choices":["SQLite","Postgres"]}`, 2).Finish("tool_calls"),
				llmtest.Text("Using SQLite."),
				llmtest.Text("Looking at line 3."),
			)
			u.WaitScreen(t, 10*time.Second, "Fido input")
			paused := writeWhileAsked(t, u, srv, release)
			assert.Contains(t, paused, "waiting for your answer", "the statusline says a question waits")
			assert.Len(t, srv.Requests(), 1, "the question is not answered yet")

			openQuestion(t, u)
			if tc.picker {
				u.WaitLua(t, `#_G.test_picker.opened == 1`, 5*time.Second)
			}
			screen := u.Screen()
			assert.Contains(t, screen, "Which database should the cache use?")
			assert.Contains(t, screen, "Postgres")
			u.Keys("Enter") // the first item: SQLite
			assert.Contains(t, lastMessage(t, srv, 1), "SQLite", "the answer reached the model")
			assert.Equal(t, typedMessage, lastUserText(t, srv, 2), "the message reached the model whole")
		})
	}
}

// /edits review at 100x30: the whole diff is on screen while the question is
// open, the choices below it cover none of its lines, Reject is the first
// (default) choice, and a diff longer than the screen says how many lines
// are left and scrolls while the question keeps the keys.
func TestTUIEditReviewShowsTheWholeDiff(t *testing.T) {
	var file []string
	for i := 1; i <= 12; i++ {
		file = append(file, fmt.Sprintf("line %d of a.txt", i))
	}
	u, srv := tuiFido(t, `require("fido").setup({ edits = "review" })`+"\nvim.cmd('Fido')\n", func(dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Join(file, "\n")+"\n"), 0o644))
	})
	var big []string
	for i := 1; i <= 80; i++ {
		big = append(big, fmt.Sprintf("row %02d of the new file", i))
	}
	patch, _ := json.Marshal(map[string]any{"operations": []map[string]string{
		{"path": "a.txt", "search": "line 6 of a.txt\nline 7 of a.txt", "replace": "LINE 6 CHANGED\nLINE 7 CHANGED\nline 7b added"},
	}})
	create, _ := json.Marshal(map[string]any{"operations": []map[string]string{
		{"path": "big.txt", "content": strings.Join(big, "\n") + "\n"},
	}})
	srv.Enqueue(
		llmtest.Reply().ToolCall("call_r1", "read_file", `{"path":"a.txt"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("call_p1", "patch", string(patch), 2).Finish("tool_calls"),
		llmtest.Text("Rejected, fine."),
		llmtest.Reply().ToolCall("call_p2", "patch", string(create), 2).Finish("tool_calls"),
		llmtest.Text("Rejected too."),
	)
	u.WaitScreen(t, 10*time.Second, "Fido input")
	u.Keys("i")
	u.Type("rename lines 6 and 7")
	u.Keys("C-s", "Escape")
	openQuestion(t, u)
	screen := u.Screen()
	t.Logf("the screen while the review is open:\n%s", screen)
	for _, l := range []string{"--- a/a.txt", "+++ b/a.txt", "-line 6 of a.txt", "-line 7 of a.txt", "+LINE 6 CHANGED",
		"+LINE 7 CHANGED", "+line 7b added", " line 3 of a.txt", " line 10 of a.txt", "all 15 lines shown above"} {
		assert.Contains(t, screen, l, "the whole diff is on screen")
	}
	rows := strings.Split(screen, "\n")
	choices := -1
	for i, r := range rows {
		if strings.Contains(r, "▸ Reject") {
			choices = i
		}
	}
	require.Positive(t, choices, "Reject is the current (first) choice")
	for i, r := range rows {
		if strings.Contains(r, "LINE 6 CHANGED") || strings.Contains(r, "line 7b added") {
			assert.Less(t, i, choices-1, "the changed lines are above the choices, not under them")
		}
	}
	u.Keys("Enter") // Reject
	assert.Contains(t, lastMessage(t, srv, 2), "rejected")
	assert.Equal(t, strings.Join(file, "\n")+"\n", readFile(t, filepath.Join(u.Dir, "a.txt")), "nothing written")

	// A new 80-line file: longer than the screen.
	u.Keys("i")
	u.Type("now the big file")
	u.Keys("C-s", "Escape")
	openQuestion(t, u)
	screen = u.Screen()
	assert.Contains(t, screen, "+row 01 of the new file")
	assert.NotContains(t, screen, "+row 80 of the new file")
	assert.Regexp(t, `lines 1–\d+ of 85 shown · \d+ more lines: <C-d> scrolls, <Tab> reads`, screen)
	for i := 0; i < 20 && !strings.Contains(u.Screen(), "+row 80 of the new file"); i++ {
		u.Keys("C-d")
		u.Pause(150 * time.Millisecond) // a person reading as they scroll
	}
	screen = u.WaitScreen(t, 5*time.Second, "+row 80 of the new file", "lines ")
	assert.Regexp(t, `lines \d+–85 of 85 shown`, screen)
	assert.True(t, u.Bool(`require("fido.questions").current() ~= nil and require("fido.questions").current().phase == "open"`),
		"scrolling answered nothing")
	u.Keys("Tab")
	u.Type("gg")
	u.WaitScreen(t, 5*time.Second, "+row 01 of the new file")
	u.Keys("Tab", "Enter") // back to the choices; Reject
	assert.Contains(t, lastMessage(t, srv, 4), "rejected")
	assert.NoFileExists(t, filepath.Join(u.Dir, "big.txt"))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
