package main

import (
	"path/filepath"
	"strings"
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
