package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/sandbox"
)

// A stdio server with "sandbox": true runs in the OS sandbox under its
// guard: it works in the workspace and cannot write outside it (the
// refusal is named in the log), while the same server without the sandbox
// could.
func TestSandboxedStdioServerCannotWriteOutside(t *testing.T) {
	if s := sandbox.Probe(); !s.Enforced {
		t.Skip("no sandbox here: " + s.Reason)
	}
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	var mu sync.Mutex
	var logged strings.Builder
	c := childServer(t, nil)
	c.Sandbox = &SandboxSpec{Enabled: true}
	m := New(Config{
		Options: Options{Servers: []ServerConfig{c}, AutoApprove: []string{"child/*"}},
		Guard:   exe, Root: root, StateDir: t.TempDir(),
		Sandbox: func(c ServerConfig, network bool) (sandbox.Policy, func([]string) []string, error) {
			return sandbox.Policy{Workspace: root, TempDir: filepath.Join(t.TempDir(), c.Name), Network: network}, nil, nil
		},
		Logf: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&logged, f+"\n", a...)
		},
	})
	m.Start(&fakePrompter{})
	t.Cleanup(m.Close)
	r := catalogRegistry(t, m)
	require.Contains(t, r.Names(), "mcp__child__write")

	inside := filepath.Join(root, "sub", "inside.txt")
	res := invoke(t, r, mainInv, "mcp__child__write", `{"text":"`+inside+`"}`)
	assert.Contains(t, res.Content, "wrote "+inside)
	assert.FileExists(t, inside)

	target := filepath.Join(outside, "planted.txt")
	res = invoke(t, r, mainInv, "mcp__child__write", `{"text":"`+target+`"}`)
	assert.Contains(t, res.Content, "cannot write")
	assert.Contains(t, res.Content, "permission denied")
	assert.NoFileExists(t, target)

	res = invoke(t, r, mainInv, "mcp__child__env", `{"text":""}`)
	assert.Contains(t, res.Content, "cwd=", "the server still answers")
	invoke(t, r, mainInv, "mcp__child__die", `{"text":""}`)
	realOutside, _ := filepath.EvalSymlinks(outside)
	want := "create " + filepath.Join(realOutside, "planted.txt") + ": outside the writable directories"
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logged.String(), want)
	}, 10*time.Second, 20*time.Millisecond, "the refusal is named in the log when the server ends")
}

// The trust question says whether a project server will be sandboxed; a
// trust record made before the sandbox existed keeps its server running as
// trusted (unsandboxed), every new decision sandboxes it, and an entry's
// "sandbox" is part of what was trusted.
func TestSandboxDefaultFollowsTheTrustDecision(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	c := ServerConfig{Name: "p", Command: "/bin/true", Source: SourceProject}
	m := New(Config{Root: root, StateDir: state, Options: Options{Servers: []ServerConfig{c}}})
	assert.False(t, m.sandboxed(c), "not trusted yet")
	require.NoError(t, m.trust.trust([]ServerConfig{c}, nil))
	assert.True(t, m.sandboxed(c), "a new trust decision sandboxes it")

	// A record from before (no sandbox_default): as it was trusted.
	b, err := os.ReadFile(filepath.Join(state, trustFile))
	require.NoError(t, err)
	old := strings.Replace(string(b), `"sandbox_default": true`, `"x": 0`, 1)
	require.NoError(t, os.WriteFile(filepath.Join(state, trustFile), []byte(old), 0o600))
	assert.False(t, m.sandboxed(c))
	assert.True(t, m.trust.load().check(c, root).trusted, "and still trusted")

	// Writing "sandbox" into the entry changes what was trusted.
	withSandbox := c
	withSandbox.Sandbox, withSandbox.RawSandbox = &SandboxSpec{Enabled: false}, "false"
	chk := m.trust.load().check(withSandbox, root)
	assert.False(t, chk.trusted)
	assert.Contains(t, chk.why, "sandbox")
	assert.False(t, m.sandboxed(withSandbox))
	assert.Contains(t, describeEntry(c, "new"), "sandbox: yes (the default)")
	assert.Contains(t, describeEntry(withSandbox, "new"), `sandbox: NO ("sandbox": false)`)

	// The file form.
	list, err := convert(map[string]serverJSON{"n": {Command: "x", Sandbox: &sandboxJSON{}}}, SourceProject, "f", os.Getenv)
	require.NoError(t, err)
	assert.Nil(t, list[0].Sandbox, "an empty sandboxJSON holds nothing")
	var f fileJSON
	require.NoError(t, jsonUnmarshal(`{"mcpServers":{"a":{"command":"x","sandbox":{"network":true}},"b":{"command":"y","sandbox":false}}}`, &f))
	list, err = convert(f.MCPServers, SourceProject, "f", os.Getenv)
	require.NoError(t, err)
	assert.Equal(t, &SandboxSpec{Enabled: true, Network: true}, list[0].Sandbox)
	assert.Equal(t, &SandboxSpec{Enabled: false}, list[1].Sandbox)
	assert.Error(t, jsonUnmarshal(`{"mcpServers":{"a":{"command":"x","sandbox":"yes"}}}`, &f))
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
