package nvim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// sandboxState waits for the host's probe and returns status().sandbox.state.
func sandboxState(t *testing.T, n *nvimtest.Nvim) string {
	t.Helper()
	n.WaitFor(t, `(require("fido").status().sandbox or {}).state ~= nil and require("fido").status().sandbox.state ~= ""`,
		10*time.Second, `require("fido").status().sandbox`)
	var state string
	n.Lua(t, &state, `return require("fido").status().sandbox.state`)
	return state
}

// The sandbox is visible where it matters: the statusline says commands
// run sandboxed, the approval preview says how this command will run and
// what it may touch, and :checkhealth fido lists what the host reports is
// enforced (Landlock ABI, seccomp, the mount namespace, bubblewrap).
func TestE2ESandboxStatuslinePreviewAndHealth(t *testing.T) {
	n, srv := startQuestions(t)
	state := sandboxState(t, n)
	var line string
	n.Lua(t, &line, `return require("fido").statusline(200)`)
	if state == "unavailable" {
		assert.Contains(t, line, "NOT sandboxed")
		t.Skip("this machine enforces no sandbox; the statusline says so")
	}
	require.Equal(t, "on", state)
	assert.Contains(t, line, "sandboxed")
	assert.NotContains(t, line, "NOT sandboxed")
	var summary string
	n.Lua(t, &summary, `return require("fido").status().sandbox.summary`)
	assert.Contains(t, summary, "Landlock ABI")

	approvalTurn(t, n, srv, "call_s", "touch ran.txt")
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
	n.WaitFor(t, `require("fido.questions").current().placed ~= nil`, 5*time.Second)
	var preview string
	n.Lua(t, &preview, `local w = require("fido.questions").current().detail_win
return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n")`)
	assert.Contains(t, preview, "sandbox: workspace-write, .git read-only, no network")
	keys(t, n, "<CR>") // Deny
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)

	require.NoError(t, n.Command("checkhealth fido"))
	var out string
	n.Lua(t, &out, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	assert.Contains(t, out, "Command sandbox (bash_exec)")
	assert.Contains(t, out, "mode ask: commands run sandboxed")
	assert.Contains(t, out, "Landlock ABI ")
	assert.Contains(t, out, "seccomp user notifications: yes")
	assert.Contains(t, out, "bubblewrap: ")
	assert.True(t, strings.Contains(out, "mount namespace: yes") || strings.Contains(out, "mount namespace: no"), out)
}

// Where the sandbox cannot be enforced (simulated: the host sees no
// Landlock) every surface says so: the statusline, one notification, the
// approval preview, :checkhealth fido.
func TestE2ESandboxUnavailableIsSaid(t *testing.T) {
	n, srv := startQuestions(t)
	require.True(t, n.Bool(t, `(function() vim.env.FIDO_SANDBOX_TEST_NO_LANDLOCK = "1"; require("fido.host").stop(); return true end)()`))
	require.NoError(t, n.Command("Fido"))
	approvalTurn(t, n, srv, "call_u", "touch ran.txt")
	require.Equal(t, "unavailable", sandboxState(t, n))
	var line string
	n.Lua(t, &line, `return require("fido").statusline(200)`)
	assert.Contains(t, line, "NOT sandboxed")
	n.WaitFor(t, `_G.fake.open ~= nil`, 10*time.Second, `_G.fake.log`)
	n.WaitFor(t, `require("fido.questions").current().placed ~= nil`, 5*time.Second)
	var preview string
	n.Lua(t, &preview, `local w = require("fido.questions").current().detail_win
return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n")`)
	assert.Contains(t, preview, "NOT sandboxed: Landlock is not available")
	keys(t, n, "<CR>") // Deny
	n.WaitFor(t, `require("fido").status().state == "idle"`, 10*time.Second)
	var notes []string
	n.Lua(t, &notes, `local out = {} for _, x in ipairs(_G.fido_notes) do table.insert(out, x.msg) end return out`)
	count := 0
	for _, msg := range notes {
		if strings.Contains(msg, "commands are not sandboxed here") {
			count++
		}
	}
	assert.Equal(t, 1, count, "said once: %v", notes)
	require.NoError(t, n.Command("checkhealth fido"))
	var out string
	n.Lua(t, &out, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	assert.Contains(t, out, "NOT enforced: Landlock is not available")
}
