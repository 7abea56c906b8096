package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/shell"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as a stdio MCP server when
// FIDO_MCP_TEST_SERVER is set: a real child process for the stdio transport.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shell.GuardCommand {
		os.Exit(shell.RunGuard(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.RunHelper(os.Args[2:]))
	}
	if os.Getenv("FIDO_MCP_TEST_SERVER") == "1" {
		srv := sdk.NewServer(&sdk.Implementation{Name: "child", Version: "1"}, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "env", Description: "Reports its environment."},
			func(context.Context, *sdk.CallToolRequest, echoIn) (*sdk.CallToolResult, any, error) {
				wd, _ := os.Getwd()
				out := fmt.Sprintf("cwd=%s openrouter=%q tavily=%q named=%q", wd, os.Getenv("OPENROUTER_API_KEY"), os.Getenv("TAVILY_API_KEY"), os.Getenv("NAMED"))
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil, nil
			})
		sdk.AddTool(srv, &sdk.Tool{Name: "write", Description: "Writes a file."},
			func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
				out := "wrote " + in.Text
				if err := os.WriteFile(in.Text, []byte("x"), 0o644); err != nil {
					out = "cannot write: " + err.Error()
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil, nil
			})
		sdk.AddTool(srv, &sdk.Tool{Name: "die", Description: "Exits."},
			func(context.Context, *sdk.CallToolRequest, echoIn) (*sdk.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "fatal: the child gave up")
				os.Exit(3)
				return nil, nil, nil
			})
		if pidFile := os.Getenv("FIDO_MCP_TEST_GRANDCHILD"); pidFile != "" {
			// A child of the server that outlives nothing on its own.
			sleep := exec.Command("sleep", "30")
			if sleep.Start() == nil {
				_ = os.WriteFile(pidFile, []byte(strconv.Itoa(sleep.Process.Pid)), 0o644)
			}
		}
		fmt.Fprintln(os.Stderr, "child server started")
		_ = srv.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func childServer(t *testing.T, env map[string]string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	e := map[string]string{"FIDO_MCP_TEST_SERVER": "1"}
	for k, v := range env {
		e[k] = v
	}
	return ServerConfig{Name: "child", Command: exe, Args: []string{"-test.run=^$"}, Env: e, Source: SourceSetup}
}

func TestStdioServerEnvironmentCwdAndCrash(t *testing.T) {
	root := t.TempDir()
	var logged atomic.Value
	logged.Store("")
	exe, err := os.Executable()
	require.NoError(t, err)
	m := New(Config{
		Options:  Options{Servers: []ServerConfig{childServer(t, map[string]string{"NAMED": "${FIDO_TEST_NAMED}", "TAVILY_API_KEY": "given"})}, AutoApprove: []string{"child/*"}},
		Guard:    exe, // under the guard, as the host runs servers
		Root:     root,
		StateDir: t.TempDir(),
		Environ: func() []string {
			return append(os.Environ(), "OPENROUTER_API_KEY=sk-secret", "TAVILY_API_KEY=tv-secret")
		},
		Logf: func(f string, a ...any) {
			logged.Store(logged.Load().(string) + fmt.Sprintf(f, a...) + "\n")
		},
	})
	m.Start(&fakePrompter{})
	t.Cleanup(m.Close)
	r := catalogRegistry(t, m)
	require.Equal(t, []string{"mcp__child__die", "mcp__child__env", "mcp__child__write"}, r.Names())

	res := invoke(t, r, mainInv, "mcp__child__env", `{"text":""}`)
	require.False(t, res.IsError, res.Content)
	real, _ := filepath.EvalSymlinks(root)
	assert.Contains(t, res.Content, "cwd="+real)
	assert.Contains(t, res.Content, `openrouter=""`, "Fido's key is not passed on")
	assert.Contains(t, res.Content, `tavily="given"`, "unless the server's env names it")
	assert.Contains(t, logged.Load().(string), "mcp child: child server started", "stderr goes to the log")

	res = invoke(t, r, mainInv, "mcp__child__die", `{"text":""}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "server_crashed")
	assert.Contains(t, res.Content, "fatal: the child gave up", "the stderr tail")

	res = invoke(t, r, mainInv, "mcp__child__env", `{"text":""}`)
	assert.False(t, res.IsError, "restarted at the next call: %s", res.Content)
	assert.Equal(t, 1, m.Status()[0].Restarts)
}

func TestStdioServerThatCannotStartFails(t *testing.T) {
	m := New(Config{Options: Options{Servers: []ServerConfig{{Name: "nope", Command: filepath.Join(t.TempDir(), "missing"), Source: SourceSetup}}},
		Root: t.TempDir(), StateDir: t.TempDir()})
	m.Start(nil)
	t.Cleanup(m.Close)
	list, _ := m.Catalog(context.Background())
	assert.Empty(t, list)
	st := m.Status()[0]
	assert.Equal(t, StateFailed, st.State)
	assert.Contains(t, st.Reason, "missing")
	assert.Equal(t, []string{"nope"}, m.Failed())
}

func TestStreamableHTTPServerWithHeaders(t *testing.T) {
	ts := newTestServer()
	var auth atomic.Value
	auth.Store("")
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		auth.Store(r.Header.Get("Authorization"))
		return ts.srv
	}, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close) // after m.Close (cleanups run last-in first-out)
	t.Setenv("FIDO_TEST_TOKEN", "tok")
	servers, err := convert(map[string]serverJSON{"web": {Type: "http", URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer ${FIDO_TEST_TOKEN}"}}},
		SourceUser, "mcp.json", os.Getenv)
	require.NoError(t, err)
	m := New(Config{Options: Options{Servers: servers, AutoApprove: []string{"web/lookup"}}, Root: t.TempDir(), StateDir: t.TempDir()})
	m.Start(nil)
	t.Cleanup(m.Close)
	r := catalogRegistry(t, m)
	assert.Len(t, r.Names(), 5)
	assert.Equal(t, "found: http", invoke(t, r, mainInv, "mcp__web__lookup", `{"text":"http"}`).Content)
	assert.Equal(t, "Bearer tok", auth.Load())
}

func TestConfigFiles(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string { return map[string]string{"HOME_BIN": "/opt/bin", "TOKEN": "t0k"}[k] }
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"mcpServers": {
		"files": {"command": "${HOME_BIN}/files", "args": ["--root", "${MISSING:-.}"], "env": {"K": "${TOKEN}"}},
		"web": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"bad": {"type": "sse", "url": "https://x"}
	}}`), 0o644))
	list, err := LoadFile(confined.ReadPath, good, good, SourceProject, env)
	require.Error(t, err, "the bad entry is reported")
	assert.Equal(t, good+`: server "bad": type "sse" is not supported (use stdio or http)`, err.Error())
	require.Len(t, list, 2, "the other servers still start")
	assert.Equal(t, ServerConfig{Name: "files", Command: "/opt/bin/files", Args: []string{"--root", "."}, Env: map[string]string{"K": "t0k"},
		RawEnv: map[string]string{"K": "${TOKEN}"}, Source: SourceProject, File: good}, list[0])
	assert.Equal(t, "Bearer t0k", list[1].Headers["Authorization"])
	assert.False(t, list[1].Stdio())

	broken := filepath.Join(dir, "broken.json")
	require.NoError(t, os.WriteFile(broken, []byte("{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\",}\n  }\n}"), 0o644))
	_, err = LoadFile(confined.ReadPath, broken, broken, SourceUser, env)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n")
	assert.True(t, strings.HasPrefix(err.Error(), broken+": not valid MCP configuration JSON: line 3"), err.Error())

	wrong := filepath.Join(dir, "wrong.json")
	require.NoError(t, os.WriteFile(wrong, []byte(`{"mcpServers": {"x": {"command": "a", "args": "not a list"}}}`), 0o644))
	_, err = LoadFile(confined.ReadPath, wrong, wrong, SourceUser, env)
	assert.ErrorContains(t, err, "mcpServers.args must be a list, not string")

	none, err := LoadFile(confined.ReadPath, filepath.Join(dir, "absent.json"), "absent.json", SourceUser, env)
	assert.NoError(t, err)
	assert.Nil(t, none)

	opts, err := ParseSetup(`{"servers": {"s": {"command": "srv", "cwd": "sub"}}, "auto_approve": ["s/*"], "start_timeout_ms": 100, "call_timeout_ms": 2000}`, env)
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, opts.StartTimeout)
	assert.Equal(t, 2*time.Second, opts.CallTimeout)
	assert.Equal(t, []string{"s/*"}, opts.AutoApprove)
	assert.Equal(t, "sub", opts.Servers[0].Cwd)
	def, err := ParseSetup("", env)
	require.NoError(t, err)
	assert.Equal(t, DefaultStartTimeout, def.StartTimeout)
	assert.Equal(t, DefaultCallTimeout, def.CallTimeout)
	_, err = ParseSetup(`{"servers": 5}`, env)
	assert.ErrorContains(t, err, "setup({ mcp = … })")
	// What Lua's encoder writes for empty tables.
	lua, err := ParseSetup(`{"servers":{"s":{"command":"x","args":{},"env":[],"headers":{}}},"auto_approve":{}}`, env)
	require.NoError(t, err)
	assert.Equal(t, "x", lua.Servers[0].Command)
	assert.Empty(t, lua.Servers[0].Args)
	empty, err := ParseSetup(`{"servers":[],"auto_approve":[]}`, env)
	require.NoError(t, err)
	assert.Empty(t, empty.Servers)

	merged, shadowed := Merge(opts.Servers, []ServerConfig{{Name: "s", File: "mcp.json"}, {Name: "u", File: "mcp.json"}})
	assert.Len(t, merged, 2)
	require.Len(t, shadowed, 1)
	assert.Contains(t, shadowed[0], `server "s" is already defined`)
	_ = json.Valid
}

// Ending the manager (the host ending) ends the server's whole process group,
// children it started included, with and without the guard.
func TestCloseEndsTheServersProcessGroup(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Run("direct", func(t *testing.T) { closeEndsGroup(t, "") })
	t.Run("guarded", func(t *testing.T) { closeEndsGroup(t, exe) })
}

func closeEndsGroup(t *testing.T, guard string) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cfg := childServer(t, map[string]string{"FIDO_MCP_TEST_GRANDCHILD": pidFile})
	m := New(Config{Options: Options{Servers: []ServerConfig{cfg}}, Guard: guard, Root: t.TempDir(), StateDir: t.TempDir()})
	m.Start(nil)
	list, _ := m.Catalog(context.Background())
	require.NotEmpty(t, list)
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, syscall.Kill(pid, 0), "the grandchild runs")
	m.Close()
	assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 20*time.Millisecond,
		"the grandchild ended with the group")
}

// .mcp.json in a hostile clone: a FIFO, a symlink to /dev/zero, a sparse
// 4 GB file, a symlink leading out of the workspace. Each is refused at
// once with one clear line, read as the host reads it (regular files inside
// the workspace only, at most MaxConfigFile).
func TestHostileProjectConfigFileIsNotRead(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "real.json")
	require.NoError(t, os.WriteFile(outside, []byte(`{"mcpServers": {"x": {"command": "sh"}}}`), 0o644))
	for _, tc := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file (it is a FIFO)"},
		{"dev zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "resolves outside"},
		{"sparse", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(4 << 30)
		}, "file too large: 4294967296 bytes"},
		{"outside", func(p string) error { return os.Symlink(outside, p) }, "resolves outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := tc.make(filepath.Join(ws, ".mcp.json")); err != nil {
				t.Skipf("cannot make the file: %v", err)
			}
			root, err := os.OpenRoot(ws)
			require.NoError(t, err)
			defer root.Close()
			read := func(name string, limit int64) ([]byte, error) { return confined.ReadFile(root, name, limit) }
			done := make(chan struct{})
			var list []ServerConfig
			go func() {
				defer close(done)
				list, err = LoadFile(read, ".mcp.json", filepath.Join(ws, ".mcp.json"), SourceProject, os.Getenv)
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Fatal("reading .mcp.json did not return")
			}
			assert.Empty(t, list)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "none of its servers start")
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
