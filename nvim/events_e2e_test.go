package nvim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// recordEvents records every User FidoTurnDone, FidoApprovalNeeded and
// FidoPlanUpdated with what Lua showed when it fired: the status's state
// and whether the transcript already held the marker the test set in
// _G.expect (the turn's last text).
const recordEvents = `_G.events = {}
_G.expect = nil
local function transcript_has(s)
  if not s then return false end
  local b = vim.fn.bufnr("fido://transcript")
  for _, l in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do
    if l:find(s, 1, true) then return true end
  end
  return false
end
for _, p in ipairs({ "FidoPlanUpdated", "FidoApprovalNeeded", "FidoTurnDone" }) do
  vim.api.nvim_create_autocmd("User", { pattern = p, callback = function(ev)
    local data = ev.data or vim.g.fido_event or {}
    local plan = type(data.plan) == "table" and data.plan or nil
    table.insert(_G.events, { name = p, state = require("fido").status().state, shown = transcript_has(_G.expect),
      version = plan and plan.version or 0 })
  end })
end
function _G.count(name)
  return #vim.tbl_filter(function(e) return e.name == name end, _G.events)
end`

func eventPlan(version int) string {
	return fmt.Sprintf(`{"reason":"step %d","items":[{"id":"impl","title":"Fix tokenizing","status":"in_progress","next_action":"patch %d"}]}`,
		version, version)
}

// Each User event fires exactly once per occurrence over 20 turns of every
// kind: two plan updates in one model reply, approvals run, denied and
// cancelled, a stream cancelled midway, quick answers that end before a
// flush could show a busy state. FidoTurnDone comes after the turn's text
// is in the transcript and the status is idle; FidoApprovalNeeded comes
// while the status shows the turn working.
func TestE2EUserEventsFireExactlyOnce(t *testing.T) {
	n, srv := startQuestions(t)
	n.Lua(t, nil, recordEvents)
	type want struct{ turns, approvals, plans int }
	var w want
	calls := 0 // the model requests answered so far
	turnDone := func() {
		t.Helper()
		w.turns++
		n.WaitFor(t, fmt.Sprintf(`_G.count("FidoTurnDone") >= %d`, w.turns), 15*time.Second,
			`_G.events`, `require("fido").status()`)
	}
	openPicker := func() {
		t.Helper()
		n.WaitFor(t, fmt.Sprintf(`fake_count() == %d and _G.fake.open ~= nil`, w.approvals), 10*time.Second,
			`_G.fake.log`, `_G.events`)
	}
	// A cancel puts the message back into the input; the user deletes it
	// (a question never opens by itself over unsent text).
	dropDraft := func() {
		t.Helper()
		n.WaitFor(t, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://input"), 0, -1, false)[1] ~= ""`, 10*time.Second)
		n.Lua(t, nil, `vim.api.nvim_buf_set_lines(vim.fn.bufnr("fido://input"), 0, -1, false, {})`)
	}
	for i := 0; i < 20; i++ {
		marker := fmt.Sprintf("Finished %d.", i)
		n.Lua(t, nil, `_G.expect = ...`, marker)
		call := fmt.Sprintf("call_%d", i)
		switch i % 6 {
		case 0: // two plan updates in one reply
			srv.Enqueue(llmtest.Reply().ToolCall(call+"a", "update_plan", eventPlan(w.plans+1), 1).
				ToolCall(call+"b", "update_plan", eventPlan(w.plans+2), 1).Finish("tool_calls"), llmtest.Text(marker))
			w.plans += 2
			calls += 2
			n.Lua(t, nil, `require("fido").submit("plan it")`)
		case 1, 4: // approved (run once), then denied
			srv.Enqueue(llmtest.Reply().ToolCall(call, "bash_exec", `{"command":"true"}`, 2).Finish("tool_calls"), llmtest.Text(marker))
			calls += 2
			w.approvals++
			n.Lua(t, nil, `require("fido").submit("run it")`)
			openPicker()
			if i%6 == 1 {
				keys(t, n, "jj<CR>") // Run once
			} else {
				keys(t, n, "<CR>") // Deny
			}
		case 2: // cancelled while the approval is open
			srv.Enqueue(llmtest.Reply().ToolCall(call, "bash_exec", `{"command":"true"}`, 2).Finish("tool_calls"))
			calls++
			w.approvals++
			asked := fmt.Sprintf("run it, turn %d", i)
			n.Lua(t, nil, `_G.expect = ...; require("fido").submit(...)`, asked)
			openPicker()
			require.NoError(t, n.Command("FidoCancel"))
			dropDraft()
		case 3: // cancelled while streaming
			part := fmt.Sprintf("streaming %d", i)
			srv.Enqueue(llmtest.Reply().Content(part).Stall())
			calls++
			n.Lua(t, nil, `_G.expect = ...; require("fido").submit("stream it")`, part)
			n.WaitFor(t, fmt.Sprintf(`vim.fn.match(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), %q) >= 0`, part),
				10*time.Second, `_G.events`)
			require.NoError(t, n.Command("FidoCancel"))
			dropDraft()
		default: // a quick answer
			srv.Enqueue(llmtest.Text(marker))
			calls++
			n.Lua(t, nil, `require("fido").submit("quick")`)
		}
		turnDone()
		_, err := srv.WaitRequests(calls, 10*time.Second)
		require.NoError(t, err)
	}
	// Whatever was still to fire has fired once Lua ran a callback scheduled
	// after a batch that followed every turn (batches arrive in order; the
	// events of each are scheduled as it is applied).
	n.Lua(t, nil, `require("fido").submit("/reasoning")`)
	n.WaitFor(t, `vim.fn.match(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "^reasoning effort") >= 0`,
		5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), -5, -1, false)`)
	n.Lua(t, nil, `_G.settled = false; vim.schedule(function() _G.settled = true end)`)
	n.WaitFor(t, `_G.settled`, 5*time.Second)

	var evs []struct {
		Name    string `msgpack:"name"`
		State   string `msgpack:"state"`
		Shown   bool   `msgpack:"shown"`
		Version int    `msgpack:"version"`
	}
	n.Lua(t, &evs, `return _G.events`)
	got := want{}
	lastVersion := 0
	for _, e := range evs {
		switch e.Name {
		case "FidoTurnDone":
			got.turns++
			assert.Equal(t, "idle", e.State, "the status is idle when the turn is done (turn %d)", got.turns)
			assert.True(t, e.Shown, "the turn's text is in the transcript when the turn is done (turn %d)", got.turns)
		case "FidoApprovalNeeded":
			got.approvals++
			assert.NotEqual(t, "idle", e.State, "the status shows the turn busy while an approval waits (approval %d)", got.approvals)
		case "FidoPlanUpdated":
			got.plans++
			assert.Equal(t, lastVersion+1, e.Version, "every plan version fires once, in order")
			lastVersion = e.Version
		}
	}
	assert.Equal(t, want{turns: 20, approvals: 10, plans: 8}, got, "each event exactly once per occurrence")
	assert.Equal(t, w, got)
}
