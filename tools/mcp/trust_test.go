package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

// trustRig starts managers on one workspace and one state directory, as
// Neovim restarting in a project does.
type trustRig struct {
	t           *testing.T
	ts          *testServer
	root, state string
}

func newTrustRig(t *testing.T) *trustRig {
	return &trustRig{t: t, ts: newTestServer(), root: t.TempDir(), state: t.TempDir()}
}

// start runs a manager on servers (all from the project's .mcp.json) and
// returns it with the questions it asked, once every server has settled.
func (r *trustRig) start(answers []string, servers ...ServerConfig) (*Manager, []tools.Question) {
	r.t.Helper()
	for i := range servers {
		servers[i].Source, servers[i].File = SourceProject, ".mcp.json"
	}
	p := &askPrompter{fakePrompter: fakePrompter{answers: answers}}
	m := New(Config{Options: Options{Servers: servers}, Root: r.root, StateDir: r.state, Transport: r.ts.transport})
	m.Start(p)
	r.t.Cleanup(m.Close)
	require.Eventually(r.t, func() bool {
		for _, st := range m.Status() {
			if st.State == StateStarting || strings.HasPrefix(st.Reason, "waiting for the answer") {
				return false
			}
		}
		return true
	}, 5*time.Second, 10*time.Millisecond, "every server settled")
	p.mu.Lock()
	defer p.mu.Unlock()
	return m, append([]tools.Question(nil), p.questions...)
}

func states(m *Manager) map[string]State {
	out := map[string]State{}
	for _, st := range m.Status() {
		out[st.Name] = st.State
	}
	return out
}

// Trust covers the entries the user saw, each part of each: the same
// entries start without a question at the next start; a changed command,
// args, env value or cwd asks again, only about the server that changed, and
// says what changed; the others start meanwhile.
func TestTrustIsBoundToEachEntry(t *testing.T) {
	r := newTrustRig(t)
	a := ServerConfig{Name: "a", Command: "node", Args: []string{"server.js"}, Env: map[string]string{"MODE": "dev"}}
	b := ServerConfig{Name: "b", Command: "uvx", Args: []string{"tool"}}

	m, qs := r.start([]string{TrustStart}, a, b)
	require.Len(t, qs, 1)
	assert.Contains(t, qs[0].Detail, "a (new)")
	assert.Contains(t, qs[0].Detail, "runs: node server.js")
	assert.Contains(t, qs[0].Detail, "env:  MODE=dev")
	assert.Equal(t, map[string]State{"a": StateReady, "b": StateReady}, states(m))

	m, qs = r.start(nil, a, b)
	assert.Empty(t, qs, "the same entries are trusted")
	assert.Equal(t, map[string]State{"a": StateReady, "b": StateReady}, states(m))

	for _, tc := range []struct {
		what   string
		change func(c *ServerConfig)
	}{
		{"command", func(c *ServerConfig) { c.Command = "sh" }},
		{"args", func(c *ServerConfig) { c.Args = []string{"-c", "touch /tmp/M; exec node server.js"} }},
		{"env MODE", func(c *ServerConfig) { c.Env = map[string]string{"MODE": "prod"} }},
		{"env NODE_OPTIONS added", func(c *ServerConfig) { c.Env = map[string]string{"MODE": "dev", "NODE_OPTIONS": "--require ./evil.js"} }},
		{"cwd", func(c *ServerConfig) { c.Cwd = "sub" }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			changed := a
			tc.change(&changed)
			m, qs := r.start([]string{TrustLater}, changed, b)
			require.Len(t, qs, 1, "asked again")
			assert.Contains(t, qs[0].Detail, "a (changed since you trusted it: "+tc.what+")")
			assert.NotContains(t, qs[0].Detail, "b (", "b is unchanged: not asked about")
			assert.Equal(t, map[string]State{"a": StateUntrusted, "b": StateReady}, states(m), "b started without a question")
		})
	}
	// Not now changed nothing: the original entries are still trusted.
	_, qs = r.start(nil, a, b)
	assert.Empty(t, qs)
}

// A workspace file the entry runs (its script) is part of the entry: when
// it changes (the model may rewrite it), the question comes again. Only its
// metadata is looked at: the file is never opened before trust.
func TestTrustCoversTheWorkspaceFilesAnEntryRuns(t *testing.T) {
	r := newTrustRig(t)
	script := filepath.Join(r.root, "tools", "srv.sh")
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec server\n"), 0o755))
	s := ServerConfig{Name: "s", Command: "./tools/srv.sh", Args: []string{"--verbose"}}
	_, qs := r.start([]string{TrustStart}, s)
	require.Len(t, qs, 1)
	_, qs = r.start(nil, s)
	require.Empty(t, qs)

	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch /tmp/M\nexec server\n"), 0o755))
	_, qs = r.start([]string{TrustLater}, s)
	require.Len(t, qs, 1)
	assert.Contains(t, qs[0].Detail, "s (changed since you trusted it: file tools/srv.sh)")
}

// Secrets in an entry are never shown in the question, logged or written to
// the trust file; a ${VAR} reference is shown as it is.
func TestTrustQuestionHidesSecrets(t *testing.T) {
	const token = "ghp_0123456789abcdefABCDEF0123456789"
	r := newTrustRig(t)
	c := ServerConfig{Name: "gh", Command: "gh-mcp",
		RawEnv: map[string]string{"GITHUB_TOKEN": token, "API": "${MY_KEY}", "LOG_LEVEL": "debug", "OPAQUE": "aB3dE6gH9jK2mN5pQ8sT1vW4"},
		Env:    map[string]string{"GITHUB_TOKEN": token, "API": "expanded-secret-value", "LOG_LEVEL": "debug", "OPAQUE": "aB3dE6gH9jK2mN5pQ8sT1vW4"}}
	var logged strings.Builder
	p := &askPrompter{fakePrompter: fakePrompter{answers: []string{TrustStart}}}
	c.Source = SourceProject
	m := New(Config{Options: Options{Servers: []ServerConfig{c}}, Root: r.root, StateDir: r.state, Transport: r.ts.transport,
		Logf: func(f string, a ...any) { logged.WriteString(f) }})
	m.Start(p)
	t.Cleanup(m.Close)
	require.Eventually(t, func() bool { return m.Status()[0].State == StateReady }, 5*time.Second, 10*time.Millisecond)
	d := p.questions[0].Detail
	assert.Contains(t, d, "GITHUB_TOKEN=‹hidden, 36 characters›")
	assert.Contains(t, d, "OPAQUE=‹hidden, 24 characters›", "a value that looks like a key is hidden whatever its name")
	assert.Contains(t, d, "API=${MY_KEY}", "a reference names the variable, not its value")
	assert.Contains(t, d, "LOG_LEVEL=debug")
	assert.NotContains(t, d, token)
	assert.NotContains(t, d, "expanded-secret-value")
	b, err := os.ReadFile(filepath.Join(r.state, trustFile))
	require.NoError(t, err)
	assert.NotContains(t, string(b), token)
	assert.NotContains(t, string(b), "debug", "values are hashed, not stored")
	assert.NotContains(t, logged.String(), token)
	fi, err := os.Stat(filepath.Join(r.state, trustFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// A trust file from an earlier Fido (one "trusted" for the whole
// .mcp.json, no entries) is not taken as trust in whatever the file says
// now: every server is asked about again, and the question says why. Its
// "never" stays never.
func TestEarlierTrustFileAsksAgain(t *testing.T) {
	r := newTrustRig(t)
	require.NoError(t, os.WriteFile(filepath.Join(r.state, trustFile), []byte(`{"project":"trusted"}`), 0o644))
	s := ServerConfig{Name: "s", Command: "sh", Args: []string{"-c", "touch M"}}
	m, qs := r.start([]string{TrustLater}, s)
	require.Len(t, qs, 1)
	assert.Contains(t, qs[0].Detail, "s (trusted by an earlier Fido that did not record which command it trusted)")
	assert.Contains(t, strings.Join(qs[0].DetailInfo, "\n"), "an earlier Fido recorded only")
	assert.Equal(t, StateUntrusted, m.Status()[0].State)

	m, qs = r.start([]string{TrustStart}, s)
	require.Len(t, qs, 1)
	assert.Equal(t, StateReady, m.Status()[0].State)
	_, qs = r.start(nil, s)
	assert.Empty(t, qs, "trusted now, for this entry")

	require.NoError(t, os.WriteFile(filepath.Join(r.state, trustFile), []byte(`{"project":"never"}`), 0o644))
	m, qs = r.start(nil, s)
	assert.Empty(t, qs)
	assert.Equal(t, StateNeverTrust, m.Status()[0].State)
}

// /mcp reload restarts from the configuration as it is now: a changed
// project entry is asked about again (it does not run meanwhile), the same
// entry starts without a question, a removed server is gone.
func TestReloadRestartsAndAsksAboutChangedEntries(t *testing.T) {
	r := newTrustRig(t)
	a := ServerConfig{Name: "a", Command: "node", Args: []string{"server.js"}, Source: SourceProject}
	p := &askPrompter{fakePrompter: fakePrompter{answers: []string{TrustStart, TrustLater}}}
	m := New(Config{Options: Options{Servers: []ServerConfig{a}}, Root: r.root, StateDir: r.state, Transport: r.ts.transport})
	m.Start(p)
	t.Cleanup(m.Close)
	require.Eventually(t, func() bool { return m.Status()[0].State == StateReady }, 5*time.Second, 10*time.Millisecond)

	changed := a
	changed.Args = []string{"-e", "require('child_process').execSync('touch M')"}
	m.Reload([]ServerConfig{changed})
	require.Eventually(t, func() bool {
		return m.Status()[0].State == StateUntrusted && !strings.HasPrefix(m.Status()[0].Reason, "waiting")
	},
		5*time.Second, 10*time.Millisecond)
	require.Equal(t, 2, p.asked())
	assert.Contains(t, p.questions[1].Detail, "a (changed since you trusted it: args)")

	m.Reload([]ServerConfig{a})
	require.Eventually(t, func() bool { return m.Status()[0].State == StateReady }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 2, p.asked(), "the trusted entry starts without a question")
	list, _ := m.Catalog(context.Background())
	assert.Len(t, list, 5)

	m.Reload(nil)
	assert.Empty(t, m.Status())
	assert.True(t, m.Empty())
}
