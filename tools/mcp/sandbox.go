package mcp

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/fido-nvim/fido/tools/shell"
)

// sandboxed reports whether a stdio server runs in the OS sandbox: as its
// entry says, else (a project server) as its trust record was made — every
// trust decision this Fido records sandboxes; one made before keeps the
// server running as it was trusted.
func (m *Manager) sandboxed(c ServerConfig) bool {
	if c.Sandbox != nil {
		return c.Sandbox.Enabled
	}
	if c.Source != SourceProject {
		return false
	}
	rec, ok := m.trust.load().servers[c.Name]
	return ok && rec.SandboxDefault
}

// sandboxedCommand is the server's process in the OS sandbox: its guard
// (outside the sandbox: the supervisor and subreaper of the tree, which
// it can then end even when the host is gone) runs it under the policy.
func (s *server) sandboxedCommand() (*exec.Cmd, error) {
	network := s.cfg.Sandbox != nil && s.cfg.Sandbox.Network
	if s.m.cfg.Sandbox == nil {
		return nil, fmt.Errorf(`it asks for the sandbox ("sandbox"), which is not available here; "sandbox": false in its entry runs it without`)
	}
	pol, env, err := s.m.cfg.Sandbox(s.cfg, network)
	if err != nil {
		return nil, fmt.Errorf(`it runs in the sandbox, which cannot be applied here (%v); "sandbox": false in its entry runs it with your full authority`, err)
	}
	cmd := s.plainCommand()
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if !filepath.IsAbs(cmd.Dir) {
		cmd.Dir = filepath.Join(s.m.cfg.Root, cmd.Dir)
	}
	cmd.Env = pol.Env(cmd.Env)
	if env != nil {
		cmd.Env = env(cmd.Env)
	}
	return shell.GuardedSandbox(cmd, s.m.cfg.Guard, pol)
}
