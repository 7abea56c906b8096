package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/files"
	"github.com/fido-nvim/fido/tools/workspace"
)

// fakeServers is an editor with scripted language servers.
type fakeServers struct {
	mu      sync.Mutex
	queries []tools.LSPQuery
	reply   tools.LSPReply
	err     error
	block   bool // LSPQuery waits for ctx

	watched [][]string
	before  tools.DiagnosticsWatch
	after   []tools.FileDiagnostics
	settled [][]string
}

func (f *fakeServers) Modified(context.Context, string) (bool, error) { return false, nil }
func (f *fakeServers) Reload(context.Context, []string)               {}

func (f *fakeServers) LSPQuery(ctx context.Context, q tools.LSPQuery) (tools.LSPReply, error) {
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return tools.LSPReply{}, ctx.Err()
	}
	return f.reply, f.err
}

// gopls is a reply of one server (UTF-16 positions) with result as JSON.
func gopls(result string) tools.LSPReply {
	return tools.LSPReply{Server: "gopls", Results: []tools.LSPResult{{Server: "gopls", Encoding: "utf-16", Result: json.RawMessage(result)}}}
}

// loc is an LSP Location (0-based line and character) in JSON.
func loc(path string, line, char int) string {
	return fmt.Sprintf(`{"uri":"file://%s","range":{"start":{"line":%d,"character":%d},"end":{"line":%d,"character":%d}}}`, path, line, char, line, char+1)
}

func (f *fakeServers) WatchDiagnostics(_ context.Context, paths []string) (tools.DiagnosticsWatch, error) {
	f.watched = append(f.watched, paths)
	return f.before, nil
}

func (f *fakeServers) SettleDiagnostics(_ context.Context, _ tools.DiagnosticsWatch, changed []string) ([]tools.FileDiagnostics, error) {
	f.settled = append(f.settled, changed)
	return f.after, nil
}

// plainEditor has no language servers.
type plainEditor struct{}

func (plainEditor) Modified(context.Context, string) (bool, error) { return false, nil }
func (plainEditor) Reload(context.Context, []string)               {}

func newWS(t *testing.T, ed tools.Editor) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() { greet() }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "greet.go"), []byte("package main\n\nfunc greet() {}\n"), 0o644))
	ws, err := workspace.New(root, ed, nil)
	require.NoError(t, err)
	return ws
}

func invoke(t *testing.T, reg *tools.Registry, inv tools.Invocation, name, args string) tools.Result {
	t.Helper()
	return reg.Invoke(t.Context(), inv, name, json.RawMessage(args))
}

func TestLSPToolsRegisterReadOnly(t *testing.T) {
	ws := newWS(t, &fakeServers{})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	assert.Equal(t, []string{"lsp_definition", "lsp_diagnostics", "lsp_hover", "lsp_references", "lsp_symbols"}, reg.Names())
	for _, tool := range reg.Tools() {
		assert.Equal(t, tools.ReadOnly, tool.Access(), tool.Name())
		assert.Greater(t, len(tool.Description()), 100, tool.Name())
		_, ok := tool.(tools.CallSummarizer)
		assert.True(t, ok, tool.Name())
	}
}

func TestPositionTools(t *testing.T) {
	fake := &fakeServers{}
	ws := newWS(t, fake)
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	sub := tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent}, DelegationDepth: 1}

	outside := filepath.Join(t.TempDir(), "print.go")
	require.NoError(t, os.WriteFile(outside, []byte("package fmt\n"+strings.Repeat("\n", 8)+"func Println()\n"), 0o644))
	fake.reply = gopls("[" + loc(filepath.Join(ws.Root, "greet.go"), 2, 5) + "," + loc(outside, 9, 0) + "]")
	res := invoke(t, reg, sub, "lsp_definition", `{"path":"main.go","line":3,"symbol":"greet"}`)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "2 definitions of greet at main.go:3 (gopls):\n"+
		"greet.go:3:6: func greet() {}\n"+
		outside+":10:1 (outside the workspace): func Println()\n", res.Content)
	assert.Equal(t, tools.LSPQuery{Method: "definition", Path: filepath.Join(ws.Root, "main.go"),
		Position: &tools.LSPPosition{Line: 2, UTF8: 14, UTF16: 14, UTF32: 14}}, fake.queries[0])

	// References: what is over the limit is counted.
	refs := []string{loc(filepath.Join(ws.Root, "main.go"), 2, 14)}
	for i := range 6 {
		refs = append(refs, loc(filepath.Join(ws.Root, "greet.go"), 0, i))
	}
	fake.reply = gopls("[" + strings.Join(refs, ",") + "]")
	res = invoke(t, reg, tools.Invocation{}, "lsp_references", `{"path":"greet.go","line":3,"column":6,"limit":1}`)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "7 references of greet.go:3 (gopls):\nmain.go:3:15: func main() { greet() }\n[6 more not shown; pass a larger limit (up to 200) to see them]")
	assert.Equal(t, &tools.LSPPosition{Line: 2, UTF8: 5, UTF16: 5, UTF32: 5}, fake.queries[1].Position)

	// Hover.
	fake.reply = gopls(`{"contents":{"kind":"markdown","value":"` + "```go\\nfunc greet()\\n```" + `"}}`)
	res = invoke(t, reg, tools.Invocation{}, "lsp_hover", `{"path":"main.go","line":3,"symbol":"greet"}`)
	assert.Equal(t, "```go\nfunc greet()\n```", res.Content)

	// A refusal from the editor reaches the model as a tool error.
	fake.reply = tools.LSPReply{Error: "no language server is attached to notes.txt (filetype text)"}
	res = invoke(t, reg, tools.Invocation{}, "lsp_definition", `{"path":"main.go","line":1,"column":1}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "lsp_definition: no language server is attached to notes.txt (filetype text)")

	n := len(fake.queries)
	for _, c := range []struct{ tool, args, want string }{
		{"lsp_definition", `{"path":"main.go","line":3}`, "give column (one-based) or symbol"},
		{"lsp_definition", `{"path":"main.go","line":3,"column":2,"symbol":"x"}`, "not both"},
		{"lsp_definition", `{"path":"main.go","line":0,"column":2}`, "line must be 1 or more"},
		{"lsp_definition", `{"path":"main.go","line":1,"column":2,"limit":3}`, `unknown argument \"limit\"`},
		{"lsp_references", `{"path":"main.go","line":1,"column":2,"limit":0}`, "limit must be 1 or more"},
		{"lsp_hover", `{"path":"../etc/passwd","line":1,"column":1}`, "leaves the workspace"},
		{"lsp_symbols", `{"query":" "}`, "query is required"},
		{"lsp_diagnostics", `{"path":"/etc/passwd"}`, "workspace"},
	} {
		res := invoke(t, reg, tools.Invocation{}, c.tool, c.args)
		assert.True(t, res.IsError, c.args)
		assert.Contains(t, res.Content, c.want, c.args)
	}
	assert.Len(t, fake.queries, n, "bad calls never reach the editor")
}

func TestSymbolsAndDiagnosticsTools(t *testing.T) {
	fake := &fakeServers{}
	ws := newWS(t, fake)
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	fake.reply = gopls(`[{"name":"greet","kind":12,"containerName":"main","location":` + loc(filepath.Join(ws.Root, "greet.go"), 2, 5) + `}]`)
	res := invoke(t, reg, tools.Invocation{}, "lsp_symbols", `{"query":"gre"}`)
	assert.Equal(t, "1 symbol matching \"gre\" (gopls):\nFunction main.greet — greet.go:3:6: func greet() {}\n", res.Content)
	assert.Equal(t, tools.LSPQuery{Method: "symbols", Query: "gre"}, fake.queries[0])

	fake.reply = tools.LSPReply{Files: []tools.FileDiagnostics{
		{Path: filepath.Join(ws.Root, "main.go"), Diagnostics: []tools.Diagnostic{{Line: 2, Col: 0, Severity: 2, Message: "unused", Source: "unusedfunc"}}},
		{Path: filepath.Join(ws.Root, "greet.go"), Diagnostics: []tools.Diagnostic{{Line: 1, Col: 0, Severity: 1, Message: "undefined: x", Source: "compiler"}}},
	}}
	res = invoke(t, reg, tools.Invocation{}, "lsp_diagnostics", `{}`)
	assert.Equal(t, "1 error, 1 warning in the loaded buffers:\ngreet.go:2:1: error: undefined: x (compiler)\nmain.go:3:1: warning: unused (unusedfunc)\n", res.Content)
	assert.Equal(t, "", fake.queries[1].Path)
	res = invoke(t, reg, tools.Invocation{}, "lsp_diagnostics", `{"path":"greet.go"}`)
	assert.Equal(t, filepath.Join(ws.Root, "greet.go"), fake.queries[2].Path)
	assert.False(t, res.IsError)
}

func TestLSPToolsWithoutServers(t *testing.T) {
	ws := newWS(t, plainEditor{})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	res := invoke(t, reg, tools.Invocation{}, "lsp_definition", `{"path":"main.go","line":3,"symbol":"greet"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "no editor with language servers")
}

// A cancelled call ends at once and says so.
func TestLSPToolCancelled(t *testing.T) {
	fake := &fakeServers{block: true}
	ws := newWS(t, fake)
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	go cancel()
	res := reg.Invoke(ctx, tools.Invocation{}, "lsp_references", json.RawMessage(`{"path":"main.go","line":3,"symbol":"greet"}`))
	assert.True(t, res.IsError)
	// Cancelled while waiting for the server ("cancelled"), or before the
	// call started (the registry's "not run: context canceled"): both end it.
	assert.Contains(t, res.Content, "cancel")
}

// The patch interceptor watches the files the operations name, lets patch
// run, and appends what the edit introduced.
func TestPatchDiagnosticsInterceptor(t *testing.T) {
	fake := &fakeServers{}
	ws := newWS(t, fake)
	reg, err := tools.NewRegistry(files.Tools(ws)...)
	require.NoError(t, err)
	require.NoError(t, reg.Intercept("patch", PatchDiagnostics(ws)))
	main := filepath.Join(ws.Root, "main.go")
	fake.before = tools.DiagnosticsWatch{ID: 7, Files: []tools.FileDiagnostics{{Path: main, Servers: []string{"gopls"}, Fresh: true}}}
	fake.after = []tools.FileDiagnostics{{Path: main, Servers: []string{"gopls"}, Fresh: true, Changed: true,
		Diagnostics: []tools.Diagnostic{{Line: 2, Col: 14, Severity: 1, Message: "undefined: foo", Source: "compiler"}}}}
	res := invoke(t, reg, tools.Invocation{}, "patch", `{"operations":[{"path":"main.go","search":"greet()","replace":"foo()"},{"path":"./main.go","search":"main","replace":"main"}]}`)
	assert.Equal(t, [][]string{{main}}, fake.watched, "each path once")
	assert.Equal(t, [][]string{{main}}, fake.settled, "only changed files settle")
	assert.Contains(t, res.Content, "op 1 ✓ main.go")
	assert.Contains(t, res.Content, "LSP (gopls): this edit introduced 1 in main.go:\nmain.go:3:15: error: undefined: foo (compiler)\n")

	// A patch that changes nothing settles nothing and adds nothing.
	fake.after = nil
	res = invoke(t, reg, tools.Invocation{}, "patch", `{"operations":[{"path":"main.go","search":"absent","replace":"x"}]}`)
	assert.True(t, res.IsError)
	assert.Equal(t, []string{}, fake.settled[1])
	assert.NotContains(t, res.Content, "LSP")

	// A file the editor reports but the patch did not change is left out.
	fake.after = []tools.FileDiagnostics{{Path: filepath.Join(ws.Root, "greet.go"), Servers: []string{"gopls"}, Fresh: true}}
	res = invoke(t, reg, tools.Invocation{}, "patch", `{"operations":[{"path":"main.go","search":"foo()","replace":"greet()"}]}`)
	assert.False(t, res.IsError, res.Content)
	assert.NotContains(t, res.Content, "LSP")

	// Outside paths are never watched (patch refuses them).
	res = invoke(t, reg, tools.Invocation{}, "patch", `{"operations":[{"path":"../x","content":"y"}]}`)
	assert.True(t, res.IsError)
	assert.Len(t, fake.watched, 3, "nothing to watch: no editor call")
}

// A FIFO, a device, a directory or a huge file in the workspace is refused
// before Neovim is asked to load it (a FIFO froze Neovim for 20 s); a
// patch of such a path is not watched for diagnostics either.
func TestLSPToolsNeverLoadNonRegularFiles(t *testing.T) {
	fake := &fakeServers{reply: gopls(`{"contents":"x"}`)}
	ws := newWS(t, fake)
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws.Root, "pipe.go"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(ws.Root, "zero.go")))
	require.NoError(t, os.Mkdir(filepath.Join(ws.Root, "dir.go"), 0o755))
	big, err := os.Create(filepath.Join(ws.Root, "big.go"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(MaxLoad+1))
	require.NoError(t, big.Close())
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	main := tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}
	for _, tc := range []struct{ path, want string }{
		{"pipe.go", "pipe.go is not a regular file (it is a FIFO)"},
		{"dir.go", "dir.go is not a regular file (it is a directory)"},
		{"big.go", "big.go is too large for the LSP tools"},
	} {
		for _, tool := range []string{"lsp_hover", "lsp_definition", "lsp_references"} {
			res := invoke(t, reg, main, tool, `{"path":"`+tc.path+`","line":1,"column":1}`)
			assert.True(t, res.IsError, "%s %s", tool, tc.path)
			assert.Contains(t, res.Content, tc.want, "%s %s", tool, tc.path)
		}
		res := invoke(t, reg, main, "lsp_diagnostics", `{"path":"`+tc.path+`"}`)
		assert.Contains(t, res.Content, tc.want)
	}
	res := invoke(t, reg, main, "lsp_hover", `{"path":"zero.go","line":1,"column":1}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "outside the workspace")
	assert.Empty(t, fake.queries, "Neovim was never asked")

	// A patch of a FIFO is not watched (watching loads the file).
	patch := PatchDiagnostics(ws)
	_, _ = patch(t.Context(), main, json.RawMessage(`{"operations":[{"path":"pipe.go","content":"x"},{"path":"main.go","content":"package main\n"}]}`),
		func(context.Context) (tools.Result, error) { return tools.Result{}, nil })
	require.Len(t, fake.watched, 1)
	assert.Equal(t, []string{filepath.Join(ws.Root, "main.go")}, fake.watched[0])
	start := time.Now()
	assert.Nil(t, readSmall(filepath.Join(ws.Root, "pipe.go")))
	assert.Less(t, time.Since(start), time.Second)
}
