package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/mcp"
	"github.com/fido-nvim/fido/tools/toolstest"
)

// lineUI records the transcript lines and answers questions through a
// scripted toolstest.Prompter.
type lineUI struct {
	quietUI
	*toolstest.Prompter
	mu    sync.Mutex
	lines []string
}

func newLineUI(pick string) *lineUI {
	return &lineUI{Prompter: &toolstest.Prompter{Every: pick, Asked: make(chan struct{}, 8)}}
}

func (u *lineUI) Notice(m string) { u.add("notice " + m) }
func (u *lineUI) Error(m string)  { u.add("error " + m) }
func (u *lineUI) add(l string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lines = append(u.lines, l)
}

func (u *lineUI) askedCount() int { return len(u.Asked) }

// /mcp trust reset forgets "Never for this workspace": the next start asks
// again. An unknown argument is one error line naming the valid ones.
func TestMCPTrustResetCommand(t *testing.T) {
	state, root := t.TempDir(), t.TempDir()
	start := func(ui *lineUI) *mcp.Manager {
		m := mcp.New(mcp.Config{Root: root, StateDir: state, Notify: func(string, bool) {},
			Options: mcp.Options{Servers: []mcp.ServerConfig{{Name: "proj", Command: "fido-test-no-such-server", Source: mcp.SourceProject, File: ".mcp.json"}}}})
		m.Start(ui)
		t.Cleanup(m.Close)
		return m
	}
	state0 := func(m *mcp.Manager) mcp.State { return m.Status()[0].State }

	ui := newLineUI(mcp.TrustNever)
	m := start(ui)
	require.Eventually(t, func() bool { return state0(m) == mcp.StateNeverTrust }, 5*time.Second, 10*time.Millisecond)

	ui = newLineUI("")
	m = start(ui)
	require.Equal(t, mcp.StateNeverTrust, state0(m), "the answer is kept for the workspace")
	assert.Zero(t, ui.askedCount())

	cmds := &mcpCommands{m: m, screen: ui}
	var row agent.SlashCommand
	for _, c := range cmds.Commands() {
		if c.Name == "/mcp" {
			row = c
		}
	}
	require.NotNil(t, row.Run, "/mcp is a row of the command table")
	assert.True(t, row.Async, "/mcp runs on its own goroutine")
	row.Run("/mcp", "trust reset")
	row.Run("/mcp", "trust")
	assert.Equal(t, []string{
		"notice the trust answer for this workspace's .mcp.json is forgotten; Fido asks again at its next start",
		fmt.Sprintf("error /mcp: unknown argument %q (use /mcp, /mcp reload or /mcp trust reset)", "trust"),
	}, ui.lines)

	ui = newLineUI(mcp.TrustLater)
	m = start(ui)
	require.Eventually(t, func() bool { return ui.askedCount() == 1 }, 5*time.Second, 10*time.Millisecond, "asked again after the reset")
	require.Eventually(t, func() bool { return state0(m) == mcp.StateUntrusted }, 5*time.Second, 10*time.Millisecond)
	assert.True(t, strings.Contains(m.Status()[0].Reason, "/mcp trust reset"))
}
