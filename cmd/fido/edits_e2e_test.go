package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// lastTool is the newest tool message of the newest request.
func (f *fido) lastTool(t *testing.T) string {
	t.Helper()
	reqs := f.srv.Requests()
	msgs := reqs[len(reqs)-1].Get("messages").Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() == "tool" {
			return msgs[i].Get("content").String()
		}
	}
	t.Fatal("no tool message in the last request")
	return ""
}

// turn runs one user message whose reply is one tool call, then a text.
func (f *fido) turn(t *testing.T, prompt, id, tool, args string) {
	t.Helper()
	calls := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().ToolCall(id, tool, args, 2).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("ok"),
	)
	require.NoError(t, f.Command("Fido "+prompt))
	f.waitIdleAfter(t, calls+2)
}

func (f *fido) disk(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.Dir, rel))
	require.NoError(t, err)
	return string(b)
}

// Read-before-write: the user's edit made after the model read a file, saved
// with :w in Neovim or written by another program, is never overwritten; the
// model is told to read the file again; a file never read is not overwritten;
// the model's own read → patch → patch sequence still works.
func TestE2EReadBeforeWriteGuard(t *testing.T) {
	f := startFido(t, "")
	path := filepath.Join(f.Dir, "a.txt")
	require.NoError(t, os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("never read\n"), 0o644))
	f.turn(t, "read a.txt", "r1", "read_file", `{"path":"a.txt"}`)

	// The user edits and saves in Neovim.
	require.NoError(t, f.Command("edit "+path))
	require.NoError(t, f.Command("normal! Goadded by the user"))
	require.NoError(t, f.Command("write"))
	f.turn(t, "rewrite a.txt", "p1", "patch", `{"operations":[{"path":"a.txt","content":"the model's version\n"}]}`)
	assert.Equal(t, "alpha\nbeta\nadded by the user\n", f.disk(t, "a.txt"), "the user's :w is kept byte for byte")
	res := f.lastTool(t)
	assert.Contains(t, res, "a.txt changed on disk since you last read it")
	assert.Contains(t, res, "Read a.txt again")

	// Another program writes it; a search/replace is refused as well.
	outside := "alpha\nbeta\nadded by the user\r\nfrom outside\n"
	require.NoError(t, os.WriteFile(path, []byte(outside), 0o644))
	f.turn(t, "fix beta", "p2", "patch", `{"operations":[{"path":"a.txt","search":"beta","replace":"BETA"}]}`)
	assert.Equal(t, outside, f.disk(t, "a.txt"))
	assert.Contains(t, f.lastTool(t), "Read a.txt again")

	// Overwriting a file never read in this conversation is refused.
	f.turn(t, "rewrite b.txt", "p3", "patch", `{"operations":[{"path":"b.txt","content":"clobbered\n"}]}`)
	assert.Equal(t, "never read\n", f.disk(t, "b.txt"))
	assert.Contains(t, f.lastTool(t), "read it before overwriting it")

	// read → patch → patch, all by the model, in one turn.
	calls := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("r2", "read_file", `{"path":"a.txt"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("p4", "patch", `{"operations":[{"path":"a.txt","search":"beta","replace":"BETA"}]}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("p5", "patch", `{"operations":[{"path":"a.txt","content":"final\n"}]}`, 1).Finish("tool_calls"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido read and rewrite a.txt"))
	f.waitIdleAfter(t, calls+4)
	assert.NotContains(t, f.lastTool(t), "error")
	assert.Equal(t, "final\n", f.disk(t, "a.txt"))
}
