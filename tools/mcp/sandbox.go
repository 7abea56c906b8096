package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools/sandbox"
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

// sandboxTransport starts the server (under its guard, both in the
// sandbox) with its stdin and stdout as pipes the connection reads and
// writes.
type sandboxTransport struct {
	s *server
	c *sandbox.Cmd
}

func (s *server) sandboxedTransport() (*sandboxTransport, error) {
	network := s.cfg.Sandbox != nil && s.cfg.Sandbox.Network
	if s.m.cfg.Sandbox == nil {
		return nil, errors.New(`it asks for the sandbox ("sandbox"), which is not available here; "sandbox": false in its entry runs it without`)
	}
	pol, env, err := s.m.cfg.Sandbox(s.cfg, network)
	if err != nil {
		return nil, fmt.Errorf(`it runs in the sandbox, which cannot be applied here (%v); "sandbox": false in its entry runs it with your full authority`, err)
	}
	plain := s.command() // the guard's command line, directory, environment and process group
	helper := s.m.cfg.SandboxHelper
	if helper == "" {
		helper, _ = os.Executable()
	}
	c, err := sandbox.CommandWithHelper(context.Background(), helper, pol, plain.Args...)
	if err != nil {
		return nil, fmt.Errorf("the sandbox cannot run it: %w", err)
	}
	c.Dir, c.Env, c.Stderr, c.SysProcAttr = plain.Dir, pol.Env(plain.Env), plain.Stderr, plain.SysProcAttr
	if env != nil {
		c.Env = env(c.Env)
	}
	return &sandboxTransport{s: s, c: c}, nil
}

// Connect starts the sandboxed server and connects over its stdio.
func (t *sandboxTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	t.c.Stdin, t.c.Stdout = inR, outW
	err = t.c.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		_ = t.c.Wait()
		if rep := t.c.Report().String(); rep != "" {
			t.s.m.logf("mcp %s: %s", t.s.cfg.Name, rep)
		}
	}()
	return (&sdk.IOTransport{Reader: outR, Writer: inW}).Connect(ctx)
}

// process is the server's process (its guard) once started, for ending
// its group.
func (t *sandboxTransport) process() *exec.Cmd {
	if t.c.Process == nil {
		return nil
	}
	return t.c.Cmd
}
