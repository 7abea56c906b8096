package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// Two Neovims on one workspace: the second's update_plan, based on the
// plan it last saw, is refused with the first's plan; its retry on that
// plan is saved as the next version. Nothing is lost, no version repeats.
func TestE2ETwoNeovimsShareOnePlan(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	a := startFido(t, state, ws)
	b := startFido(t, state, ws)
	// Both sessions start before any plan exists.
	require.NoError(t, a.Command("Fido"))
	require.NoError(t, b.Command("Fido"))
	a.WaitFor(t, `require("fido").status().model == "test/model"`, 10*time.Second, `require("fido").status()`)
	b.WaitFor(t, `require("fido").status().model == "test/model"`, 10*time.Second, `require("fido").status()`)

	a.makePlan(t) // version 1, from a

	mine := `{"reason":"b's own plan","items":[{"id":"b-step","title":"B's work","status":"in_progress","next_action":"do b"}]}`
	retry := `{"reason":"merge","items":[{"id":"impl","title":"Fix tokenizing","status":"in_progress","next_action":"patch lexer.go"},{"id":"b-step","title":"B's work","status":"pending","next_action":"do b"}]}`
	b.srv.Enqueue(
		llmtest.Reply().ToolCall("call_b1", "update_plan", mine, 1).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Reply().ToolCall("call_b2", "update_plan", retry, 1).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("Merged."),
	)
	require.NoError(t, b.Command("Fido plan your part"))
	b.waitIdleAfter(t, 3)
	reqs := b.srv.Requests()
	require.Len(t, reqs, 3)
	refusal := reqs[1].Get("messages.@reverse.0.content").String()
	assert.Contains(t, refusal, "update_plan refused, nothing was saved: another Fido session on this workspace changed the plan since version 0")
	assert.Contains(t, refusal, "handle CRLF line endings", "the refusal carries a's plan")

	var saved struct {
		Version int `json:"version"`
		Items   []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	entries, err := os.ReadDir(filepath.Join(state, "workspaces"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	data, err := os.ReadFile(filepath.Join(state, "workspaces", entries[0].Name(), "plan.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &saved))
	assert.Equal(t, 2, saved.Version)
	require.Len(t, saved.Items, 2)
	assert.Equal(t, "impl", saved.Items[0].ID)
	assert.Equal(t, "b-step", saved.Items[1].ID)
	b.WaitFor(t, `require("fido").status().plan.version == 2`, 5*time.Second, `require("fido").status().plan`)
}

// setup({ idle_timeout_ms }) reaches the host: a stream that only sends
// keep-alives after its first words fails after that long, with a clear error.
func TestE2EIdleTimeoutOption(t *testing.T) {
	f := startFido(t, "")
	f.Lua(t, nil, `require("fido").setup({ idle_timeout_ms = 400 })`)
	f.srv.Enqueue(llmtest.Reply().Content("Let me think").Pace(50 * time.Millisecond).KeepAlive(1 << 20))
	start := time.Now()
	require.NoError(t, f.Command("Fido hello"))
	f.WaitFor(t, `require("fido").status().state == "idle" and require("fido").status().usage.calls == 0 and table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "\n"):find("400ms", 1, true) ~= nil`,
		10*time.Second, `require("fido").status()`, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	assert.Less(t, time.Since(start), 8*time.Second)
	assert.Contains(t, f.transcript(t), "(keep-alives do not count): the stream stalled")
}
