package agent

import (
	"github.com/fido-nvim/fido/tools"
)

// Helpers for package agent_test, whose tests drive a session through the
// real provider over HTTP: agent/openrouter imports agent, so they cannot
// live in package agent itself.
var (
	NewTestSession = newTestSession
	WaitIdle       = waitIdle
)

// NewEchoTool is a read-only tool that returns its "text" argument.
func NewEchoTool(name string) tools.Tool { return &echoTool{name: name} }

// Events is what the recording UI was shown, in order.
func (u *recUI) Events() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.events...)
}
