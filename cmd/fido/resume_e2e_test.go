package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// A resumed conversation brings back its cost in the statusline and the
// durable plan; setup({ resume = "new" }) starts afresh instead, with the
// plan (the workspace's) still restored but none of the saved messages.
func TestE2EResumeRestoresTotalsAndResumeNewStartsAfresh(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	f1 := startFido(t, state, ws)
	f1.makePlan(t)
	var cost1 float64
	f1.Lua(t, &cost1, `return require("fido").status().usage.cost`)
	require.Greater(t, cost1, 0.0)
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))

	f2 := startFido(t, state, ws)
	require.NoError(t, f2.Command("Fido"))
	f2.waitTranscript(t, "Planned.", 15*time.Second)
	f2.WaitFor(t, `require("fido").status().usage.cost > 0 and require("fido").status().plan ~= nil`, 10*time.Second, `require("fido").status()`)
	var st struct {
		Usage struct {
			Cost float64 `msgpack:"cost"`
		} `msgpack:"usage"`
		Plan struct {
			Items []struct {
				ID string `msgpack:"id"`
			} `msgpack:"items"`
		} `msgpack:"plan"`
	}
	f2.Lua(t, &st, `return require("fido").status()`)
	assert.InDelta(t, cost1, st.Usage.Cost, 1e-9, "the statusline's total comes back with the conversation")
	assert.Len(t, st.Plan.Items, 3)
	require.NoError(t, f2.ExecLua(`require("fido.host").stop()`, nil))

	f3 := startFido(t, state, ws)
	f3.Lua(t, nil, `require("fido").setup({ resume = "new" })`)
	require.NoError(t, f3.Command("Fido"))
	f3.srv.Enqueue(llmtest.Text("fresh start"))
	require.NoError(t, f3.Command("Fido hello"))
	f3.waitIdleAfter(t, 1)
	assert.NotContains(t, f3.transcript(t), "Planned.")
	got := roles(f3.srv.Requests()[0])
	require.Len(t, got, 4, strings.Join(got, "\n"))
	assert.True(t, strings.HasPrefix(got[0], "system:"))
	assert.Contains(t, got[1], "update_plan", "the workspace's plan is restored in a new conversation too")
	assert.True(t, strings.HasPrefix(got[2], "tool:"))
	assert.Equal(t, "user:hello", got[3])
}

// kill -9 of Neovim while an answer streams loses at most that answer: the
// host goes with its Neovim, and a new Neovim resumes the conversation with
// every complete message and a valid history.
func TestE2EConversationSurvivesNeovimKill(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	f1 := startFido(t, state, ws)
	f1.srv.Enqueue(
		llmtest.Text("first answer"),
		llmtest.Reply().Content("half an ").Pause(20*time.Second).Content("answer").Finish("stop"),
	)
	require.NoError(t, f1.Command("Fido first question"))
	f1.waitIdleAfter(t, 1)
	require.NoError(t, f1.Command("Fido second question"))
	f1.waitTranscript(t, "half an", 10*time.Second)
	var nvimPid, hostPid int
	f1.Lua(t, &nvimPid, `return vim.fn.getpid()`)
	f1.Lua(t, &hostPid, `return vim.fn.jobpid(require("fido.host").chan())`)
	require.NoError(t, syscall.Kill(nvimPid, syscall.SIGKILL))
	// The host notices its Neovim is gone and exits on its own.
	require.Eventually(t, func() bool { return !alive(hostPid) }, 10*time.Second, 50*time.Millisecond, "the host outlived its Neovim")

	f2 := startFido(t, state, ws)
	require.NoError(t, f2.Command("Fido"))
	f2.waitTranscript(t, "first answer", 15*time.Second)
	f2.srv.Enqueue(llmtest.Text("recovered"))
	require.NoError(t, f2.Command("Fido go on"))
	f2.waitIdleAfter(t, 1)
	got := roles(f2.srv.Requests()[0])
	require.GreaterOrEqual(t, len(got), 5, strings.Join(got, "\n"))
	assert.Equal(t, []string{"user:first question", "assistant:first answer", "user:second question"}, got[1:4])
	assert.Equal(t, "user:go on", got[len(got)-1])
	assert.NotContains(t, strings.Join(got, "\n"), "half an", "the answer being streamed is the most that is lost")
}
