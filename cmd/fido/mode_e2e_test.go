package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// newestUser is the newest user message of the newest request.
func (f *fido) newestUser(t *testing.T) string {
	t.Helper()
	reqs := f.srv.Requests()
	require.NotEmpty(t, reqs)
	users := f.userMessagesOf(t, len(reqs)-1)
	require.NotEmpty(t, users, "no user message in the last request")
	return users[len(users)-1]
}

func (f *fido) setMode(t *testing.T, mode string) {
	t.Helper()
	require.NoError(t, f.Command("Fido /mode "+mode))
	f.WaitFor(t, `require("fido").status().mode == "`+mode+`"`, 5*time.Second, `require("fido").status()`)
	// The notice comes after the mode is saved with the conversation.
	f.waitTranscript(t, "mode: "+mode, 5*time.Second)
}

// /mode auto-edit with setup({ edits = "review" }): patches apply without the
// review picker while /edits stays "review" and commands still ask; the
// statusline shows the mode. /mode default brings the review back (and hides
// the mode from the statusline). The model hears of each change once.
func TestE2EModeAutoEditAndDefault(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "a.txt"), []byte("one\n"), 0o644))
	f.Lua(t, nil, `require("fido").setup({ edits = "review" })`)
	f.Lua(t, nil, reviewUI) // every picker is recorded and dismissed

	f.setMode(t, "auto-edit")
	assert.True(t, f.Bool(t, `require("fido").status().edits == "review"`), "/edits is left as it was")
	var line string
	f.Lua(t, &line, `return require("fido").statusline(160)`)
	assert.Contains(t, line, "auto-edit")

	f.turn(t, "edit", "p1", "patch", `{"operations":[{"path":"a.txt","search":"one","replace":"two"}]}`)
	assert.Empty(t, f.asked(t), "no review picker in auto-edit")
	assert.Equal(t, "two\n", f.disk(t, "a.txt"))
	assert.NotContains(t, f.lastTool(t), "rejected")
	assert.Contains(t, f.newestUser(t), "switched to auto-edit mode")

	// Commands still need approval: the dismissed picker denies.
	f.turn(t, "run", "b1", "bash_exec", `{"command":"touch made"}`)
	asked := f.asked(t)
	require.Len(t, asked, 1, "bash_exec asks in auto-edit")
	assert.Contains(t, asked[0].Items, "Run once")
	assert.NoFileExists(t, filepath.Join(f.Dir, "made"))
	assert.NotContains(t, f.newestUser(t), "[Fido:", "the mode note is told once")

	f.setMode(t, "default")
	f.Lua(t, &line, `return require("fido").statusline(160)`)
	assert.NotContains(t, line, "auto-edit")
	f.turn(t, "edit", "p2", "patch", `{"operations":[{"path":"a.txt","search":"two","replace":"three"}]}`)
	asked = f.asked(t)
	require.Len(t, asked, 2, "the default mode reviews again")
	assert.Contains(t, asked[1].Preview, "-two")
	assert.Contains(t, asked[1].Preview, "+three")
	assert.Equal(t, "two\n", f.disk(t, "a.txt"), "dismissed: rejected")
	assert.Contains(t, f.lastTool(t), "The user rejected this change")
	assert.Contains(t, f.newestUser(t), "switched back to the default mode")
}

// The mode is saved with the conversation: after a restart the resumed
// conversation is in plan mode again (status, statusline, the guard), and
// after another change and restart, in that mode.
func TestE2EModeRestoredWithResumedConversation(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644))
	f1 := startFido(t, state, ws)
	f1.setMode(t, "plan")
	f1.srv.Enqueue(llmtest.Text("planning"))
	require.NoError(t, f1.Command("Fido plan the change"))
	f1.waitIdleAfter(t, 1)
	require.NoError(t, f1.ExecLua(`require("fido.host").stop()`, nil))

	f2 := startFido(t, state, ws)
	require.NoError(t, f2.Command("Fido"))
	f2.waitTranscript(t, "planning", 10*time.Second)
	f2.WaitFor(t, `require("fido").status().mode == "plan"`, 5*time.Second, `require("fido").status()`)
	var line string
	f2.Lua(t, &line, `return require("fido").statusline(160)`)
	assert.Contains(t, line, "plan")
	f2.turn(t, "change it", "p1", "patch", `{"operations":[{"path":"a.txt","search":"one","replace":"two"}]}`)
	assert.Contains(t, f2.lastTool(t), "permission_denied")
	assert.Equal(t, "one\n", f2.disk(t, "a.txt"))
	f2.setMode(t, "auto-edit")
	require.NoError(t, f2.ExecLua(`require("fido.host").stop()`, nil))

	f3 := startFido(t, state, ws)
	require.NoError(t, f3.Command("Fido"))
	f3.waitTranscript(t, "planning", 10*time.Second)
	f3.WaitFor(t, `require("fido").status().mode == "auto-edit"`, 5*time.Second, `require("fido").status()`)
}
