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

// noteCount counts the recorded notifications that contain text.
func noteCount(t *testing.T, n *nvimtest.Nvim, text string) int {
	t.Helper()
	var notes []string
	n.Lua(t, &notes, `return vim.tbl_map(function(x) return x.msg end, _G.fido_notes)`)
	count := 0
	for _, s := range notes {
		if strings.Contains(s, text) {
			count++
		}
	}
	return count
}

// An approval that arrives while the user is typing a : command waits, even
// long after the last keystroke, until the command line closes: the keys of
// the command (its <CR> too) run the command and never reach the picker,
// which opens afterwards (a quiet second, then the guard time) in normal
// mode with Deny first.
func TestE2EApprovalWaitsForTheCommandLine(t *testing.T) {
	n, srv := startQuestions(t)
	keys(t, n, ":let g:typed = 'half")
	n.WaitFor(t, `vim.api.nvim_get_mode().mode == "c"`, 2*time.Second, `vim.api.nvim_get_mode()`)
	approvalTurn(t, n, srv, "call_cl", "touch ran.txt")
	n.WaitFor(t, `#require("fido.questions").queued() == 1`, 10*time.Second, `require("fido").status()`)
	// Well past the quiet second: only the open command line holds it back.
	time.Sleep(1200 * time.Millisecond)
	assert.True(t, n.Bool(t, `fake_count() == 0`), "no picker while the command line is open")
	assert.True(t, n.Bool(t, `require("fido.questions").current() == nil`), "the approval is not open")
	assert.True(t, n.Bool(t, `vim.api.nvim_get_mode().mode == "c"`), "the user is still on the command line")
	assert.True(t, n.Bool(t, `vim.fn.getcmdline() == "let g:typed = 'half"`), "the command line kept its text")
	assert.True(t, n.Bool(t, `require("fido").status().waiting == "approval"`))
	assert.Equal(t, 1, noteCount(t, n, "an approval waits"), "one notification says what waits")
	n.WaitFor(t, `vim.fn.join(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), " "):find("when you leave the command line", 1, true) ~= nil`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)

	keys(t, n, "way'<CR>")
	n.WaitFor(t, `vim.g.typed == "halfway"`, 2*time.Second, `vim.g.typed`, `vim.api.nvim_get_mode()`)
	closed := time.Now()
	n.WaitFor(t, `fake_count() == 1 and _G.fake.open ~= nil`, 5*time.Second, `_G.fake.log`, `vim.api.nvim_get_mode()`)
	assert.GreaterOrEqual(t, time.Since(closed), 1300*time.Millisecond, "opened after the quiet second and the guard that follow the command line's last key")
	var asked struct {
		Items []string `msgpack:"items"`
		Mode  string   `msgpack:"mode"`
	}
	n.Lua(t, &asked, `return _G.fake.log[1]`)
	assert.Equal(t, "n", asked.Mode, "the picker opens in normal mode")
	require.NotEmpty(t, asked.Items)
	assert.Equal(t, "Deny", asked.Items[0])
	var pk []string
	n.Lua(t, &pk, `return _G.fake.keys`)
	assert.Empty(t, pk, "no key of the command line reached the picker")
	_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
	assert.True(t, os.IsNotExist(err), "the command line's <CR> approved nothing")

	keys(t, n, "<CR>") // Deny
	assert.Contains(t, lastToolResult(t, srv, 1), "the user denied")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second, `require("fido").status()`)
	_, err = os.Stat(filepath.Join(n.Dir, "ran.txt"))
	assert.True(t, os.IsNotExist(err))
}

// <C-c> in Fido's input (the documented cancel key) closes the approval's
// picker and its preview, or drops the approval still waiting for a typing
// pause; the turn ends, nothing runs, the call's line and the model's next
// request say the call was declined.
func TestE2ECtrlCInTheInputCancelsTheApproval(t *testing.T) {
	for _, tc := range []struct {
		name string
		// reach gets the approval to the state under test and leaves the
		// cursor in the input window.
		reach func(t *testing.T, n *nvimtest.Nvim)
		mode  string // the input's mode when <C-c> is pressed
	}{
		{"picker open, back in the input", reachOpenPicker, "n"},
		{"waiting while the user types", func(t *testing.T, n *nvimtest.Nvim) {
			n.Lua(t, nil, `vim.api.nvim_set_current_win(require("fido.layout").input_win())`)
			keys(t, n, "i")
			n.WaitFor(t, `vim.api.nvim_get_mode().mode == "i"`, 2*time.Second)
			// Keep typing (insert mode holds it back anyway).
			deadline := time.Now().Add(10 * time.Second)
			for !n.Bool(t, `#require("fido.questions").queued() == 1`) {
				require.True(t, time.Now().Before(deadline), "the approval never queued")
				keys(t, n, "x")
				time.Sleep(100 * time.Millisecond)
			}
			require.True(t, n.Bool(t, `fake_count() == 0`), "still waiting for a pause")
		}, "i"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, srv := startQuestions(t)
			approvalTurn(t, n, srv, "call_cc", "touch ran.txt")
			tc.reach(t, n)
			require.Equal(t, tc.mode, currentMode(t, n))
			n.WaitFor(t, `require("fido").status().state ~= "idle"`, 2*time.Second, `require("fido").status()`)
			keys(t, n, "<C-c>")
			n.WaitFor(t, `require("fido.questions").current() == nil and #require("fido.questions").queued() == 0`, 2*time.Second,
				`require("fido.questions").current()`, `require("fido.questions").queued()`)
			n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second, `require("fido").status()`)
			assert.True(t, n.Bool(t, `(function()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then return false end
  end
  return true
end)()`), "no picker or preview float is left")
			assert.True(t, n.Bool(t, `require("fido").status().waiting == nil`), "nothing waits any more")
			time.Sleep(400 * time.Millisecond) // what a late dismissal of the picker would need
			assert.True(t, n.Bool(t, `fake_count() <= 1`), "the approval did not open again")
			_, err := os.Stat(filepath.Join(n.Dir, "ran.txt"))
			assert.True(t, os.IsNotExist(err), "the command never ran")
			assert.Len(t, srv.Requests(), 1, "a cancelled turn asks the model nothing more")
			var callLine string
			for _, l := range n.Lines(t, "fido://transcript") {
				if strings.HasPrefix(l, "● bash_exec") {
					callLine = l
				}
			}
			assert.Contains(t, callLine, "✗", "the call's line says it did not run")
			assert.Contains(t, n.Lines(t, "fido://transcript"), "cancelled")

			// The model learns with the next prompt that nothing ran.
			result := nextToolResult(t, n, srv, "call_cc")
			assert.Contains(t, result, `"declined"`)
			assert.Contains(t, result, "nothing was run")
		})
	}
}

// Cancelling (here <C-c> in the input) while the approval's picker is open
// ends the call as cancelled, not as a dismissal of the picker: init.lua's
// cancel() tells the host first so that "a pending approval ends as
// cancelled, not as the dismissal that closing its picker sends next". The
// order is a race in the host, so the test cancels several approvals.
func TestE2ECancelEndsTheOpenApprovalAsCancelled(t *testing.T) {
	n, srv := startQuestions(t)
	const rounds = 8
	var calls []string
	for i := 1; i <= rounds; i++ {
		call := fmt.Sprintf("call_cx%d", i)
		calls = append(calls, call)
		// Only the tool call: the cancelled turn asks nothing more.
		srv.Enqueue(llmtest.Reply().ToolCall(call, "bash_exec", `{"command":"touch ran.txt"}`, 2).Finish("tool_calls"))
		n.Lua(t, nil, `require("fido").submit("run it")`)
		n.WaitFor(t, fmt.Sprintf(`fake_count() == %d`, i), 10*time.Second, `_G.fake.log`)
		reachOpenPicker(t, n)
		keys(t, n, "<C-c>")
		n.WaitFor(t, `require("fido").status().state == "idle"`, 5*time.Second, `require("fido").status()`)
		n.WaitFor(t, fmt.Sprintf(`vim.fn.match(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "^● bash_exec.*%s.*✗") >= 0`, call),
			5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
		// The cancel put "run it" back into the input: unsent text holds
		// the next question back, so the user clears it.
		n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] == "run it"`, 5*time.Second)
		n.Lua(t, nil, `require("fido.layout").set_input("", false)`)
	}
	lines := map[string]string{}
	for _, l := range n.Lines(t, "fido://transcript") {
		for _, c := range calls {
			if strings.HasPrefix(l, "● bash_exec") && strings.Contains(l, c+" ") {
				lines[c] = l
			}
		}
	}
	var dismissed []string
	for _, c := range calls {
		if !strings.Contains(lines[c], "cancelled while waiting for approval") {
			dismissed = append(dismissed, lines[c])
		}
	}
	assert.Empty(t, dismissed, "every cancelled call's line says it was cancelled, none that the prompt was dismissed")
	result := nextToolResult(t, n, srv, calls[rounds-1])
	assert.Contains(t, result, "cancelled before the user approved it")
	assert.NotContains(t, result, "dismissed")
}

// reachOpenPicker waits for the approval's picker and its preview, then
// goes back to the input window; the picker (one that stays open when it
// loses focus) and the preview stay.
func reachOpenPicker(t *testing.T, n *nvimtest.Nvim) {
	t.Helper()
	n.WaitFor(t, `_G.fake.open ~= nil and vim.api.nvim_win_is_valid(_G.fake.open.win) and require("fido.questions").current() ~= nil`,
		10*time.Second, `_G.fake.log`)
	require.True(t, n.Bool(t, `require("fido.questions").current().detail_win ~= nil`), "the command's preview is open")
	keys(t, n, "<C-w>p")
	n.WaitFor(t, `vim.api.nvim_get_current_win() == require("fido.layout").input_win()`, 2*time.Second,
		`vim.api.nvim_get_current_win()`, `require("fido.layout").input_win()`)
	require.True(t, n.Bool(t, `_G.fake.open ~= nil and vim.api.nvim_win_is_valid(_G.fake.open.win)`))
}

// nextToolResult submits another prompt and returns the content of the tool
// message for call that its request carries.
func nextToolResult(t *testing.T, n *nvimtest.Nvim, srv *llmtest.Server, call string) string {
	t.Helper()
	before := len(srv.Requests())
	srv.Enqueue(llmtest.Text("OK."))
	n.Lua(t, nil, `require("fido").submit("never mind")`)
	reqs, err := srv.WaitRequests(before+1, 10*time.Second)
	require.NoError(t, err)
	msg := reqs[before].Get(`messages.#(tool_call_id=="` + call + `")`)
	require.True(t, msg.Exists(), "the request carries the call's result")
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second, `require("fido").status()`)
	return msg.Get("content").String()
}

func currentMode(t *testing.T, n *nvimtest.Nvim) string {
	t.Helper()
	var m string
	n.Lua(t, &m, `return vim.api.nvim_get_mode().mode`)
	return m
}
