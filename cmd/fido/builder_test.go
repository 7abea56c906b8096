package main

import (
	"context"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// headlessFront is a front end without Neovim, as `fido acp` will be: a
// screen that records the transcript, and a prompter that answers every
// question with its safe choice.
type headlessFront struct {
	mu    sync.Mutex
	lines []string
	asked []tools.Question
}

func (f *headlessFront) add(l string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines = append(f.lines, l)
}

func (f *headlessFront) transcript() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.lines, "\n")
}

func (f *headlessFront) Info(agent.SessionInfo)         {}
func (f *headlessFront) SetState(agent.TurnState)       {}
func (f *headlessFront) Usage(_, _ agent.Usage)         {}
func (f *headlessFront) Plan(*plan.Plan)                {}
func (f *headlessFront) Subagent(*agent.SubagentStatus) {}
func (f *headlessFront) Notify(m string, _ agent.Level) { f.add("notify " + m) }
func (f *headlessFront) UserText(t string)              { f.add("user " + t) }
func (f *headlessFront) Reasoning(d string)             { f.add("reasoning " + d) }
func (f *headlessFront) Content(d string)               { f.add("content " + d) }
func (f *headlessFront) Error(m string)                 { f.add("error " + m) }
func (f *headlessFront) Notice(m string)                { f.add("notice " + m) }
func (f *headlessFront) ToolCall(c agent.ToolCallInfo) {
	f.add("call " + c.Name + " " + c.Arguments + " " + c.Access.String())
}
func (f *headlessFront) ToolResult(r agent.ToolResultInfo) {
	f.add("result " + r.Name + " " + r.Summary)
}
func (f *headlessFront) Select(context.Context, string, []string) (int, error) {
	return -1, nil
}
func (f *headlessFront) Input(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}
func (f *headlessFront) Ask(_ context.Context, q tools.Question) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q)
	return q.Safe, nil
}
func (f *headlessFront) AskExpert(context.Context, string) (string, bool, error) {
	return "", false, nil
}

// The composition root builds Fido's whole core for a front end without
// Neovim (no editor surface, no editor buffers): a turn reads a file with
// the real tools, an approval is asked with its whole command, and the
// conversation is saved, all through the screen and the prompter alone.
func TestBuilderMakesAHeadlessCore(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("headless notes\n"), 0o644))
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Reply().ToolCall("r1", "read_file", `{"path":"notes.txt"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("b1", "bash_exec", `{"command":"touch ran.txt"}`, 1).Finish("tool_calls"),
		llmtest.Text("I read it and did not run the command."),
	)
	configHome := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return configHome
		}
		return ""
	}
	cfg := agent.Config{Model: "test/model", APIKey: "test-key", BaseURL: srv.URL(), ContextTokens: 100000,
		StateRoot: t.TempDir(), ConfigDir: filepath.Join(configHome, "fido")}
	front := &headlessFront{}
	core, err := (&builder{cfg: cfg, root: root, getenv: getenv, logger: log.New(io.Discard, "", 0), front: front}).build()
	require.NoError(t, err)
	t.Cleanup(core.Close)

	core.Submit("read notes.txt, then touch ran.txt")
	require.Eventually(t, func() bool { return strings.Contains(front.transcript(), "content I read it") }, 10*time.Second, 10*time.Millisecond)
	core.Wait()
	tr := front.transcript()
	assert.Contains(t, tr, `call read_file {"path":"notes.txt"} read_only`)
	assert.Contains(t, tr, `call bash_exec {"command":"touch ran.txt"} mutating`)
	front.mu.Lock()
	require.Len(t, front.asked, 1, "the command was asked about")
	assert.Contains(t, front.asked[0].Detail, "touch ran.txt")
	front.mu.Unlock()
	assert.NoFileExists(t, filepath.Join(root, "ran.txt"), "the safe answer refused it")
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Contains(t, reqs[1].Chat.Messages[len(reqs[1].Chat.Messages)-1].Content, "headless notes")
	assert.NotEmpty(t, core.ConversationID(), "the conversation is saved")
}
