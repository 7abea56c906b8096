package agent

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testCommands struct {
	mu  sync.Mutex
	ran []string
}

func (c *testCommands) Commands() []SlashCommand {
	return []SlashCommand{
		{Command: Command{Name: "/mcp", Args: "[reload]", Help: "MCP servers"}, Async: true, Run: c.run},
		{Command: Command{Name: "/mcp:"}, Prefix: true, Async: true, Run: c.run},
	}
}
func (c *testCommands) run(name, arg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ran = append(c.ran, name+"|"+arg)
}

func TestExtraCommandsRunAndAreListed(t *testing.T) {
	cmds := &testCommands{}
	s, ui := newTestSession(t, &scriptProvider{}, SessionConfig{Commands: cmds})
	s.Submit("/mcp reload")
	s.Submit("/mcp:srv:review a.go b.go")
	s.Submit("/help")
	require.Eventually(t, func() bool {
		cmds.mu.Lock()
		defer cmds.mu.Unlock()
		return len(cmds.ran) == 2
	}, 2e9, 1e7)
	assert.ElementsMatch(t, []string{"/mcp|reload", "/mcp:srv:review|a.go b.go"}, cmds.ran)
	assert.Contains(t, strings.Join(ui.events, "\n"), "/mcp [reload] — MCP servers")
}
