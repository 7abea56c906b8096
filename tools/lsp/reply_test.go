package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

func raw(server, enc, js string) tools.LSPResult {
	return tools.LSPResult{Server: server, Encoding: enc, Result: json.RawMessage(js)}
}

// Locations, LocationLinks and single Locations from several servers become
// character columns with their line's text, each place once, read from the
// files (the workspace through the sandbox, others confined, a FIFO never
// waited for).
func TestReadLocations(t *testing.T) {
	ws := newWS(t, plainEditor{})
	u := filepath.Join(ws.Root, "dir with space", "u.go")
	require.NoError(t, os.MkdirAll(filepath.Dir(u), 0o755))
	require.NoError(t, os.WriteFile(u, []byte("package u\n\nvar s = \"😀\" + x\n"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws.Root, "pipe.go"), 0o644))
	uri := "file://" + filepath.Join(ws.Root, "dir%20with%20space", "u.go")
	reply := tools.LSPReply{Server: "a, b", Results: []tools.LSPResult{
		// x after the emoji: UTF-16 character 15, code point 14, byte 17.
		raw("a", "utf-16", `[{"uri":"`+uri+`","range":{"start":{"line":2,"character":15}}},
			{"targetUri":"`+uri+`#frag","targetRange":{"start":{"line":0,"character":0}},"targetSelectionRange":{"start":{"line":0,"character":8}}},
			{"uri":"file://`+filepath.Join(ws.Root, "pipe.go")+`","range":{"start":{"line":0,"character":3}}},
			{"uri":"jdt://contents/x.class","range":{"start":{"line":4,"character":2}}},
			{"uri":"no scheme"}]`),
		raw("b", "utf-32", `{"uri":"`+uri+`","range":{"start":{"line":2,"character":14}}}`), // the same place
		raw("c", "utf-8", `{"uri":"`+uri+`","range":{"start":{"line":2,"character":17}}}`),  // again
		raw("d", "utf-8", `{"targetUri":"`+uri+`","targetRange":{"start":{"line":9,"character":0}}}`),
	}}
	start := time.Now()
	ans, msg := readLocations(ws, reply)
	assert.Less(t, time.Since(start), time.Second, "the FIFO is not waited for")
	assert.Empty(t, msg)
	assert.Equal(t, []location{
		{Path: filepath.Join(ws.Root, "dir with space", "u.go"), Line: 3, Col: 15, Text: `var s = "😀" + x`},
		{Path: filepath.Join(ws.Root, "dir with space", "u.go"), Line: 1, Col: 9, Text: "package u"},
		{Path: filepath.Join(ws.Root, "pipe.go"), Line: 1, Col: 1},
		{Path: "jdt://contents/x.class", Line: 5, Col: 1},
		{Path: filepath.Join(ws.Root, "dir with space", "u.go"), Line: 10, Col: 1}, // past the end
	}, ans.Locations)
	assert.Equal(t, 5, ans.Total)
	assert.Equal(t, "a, b", ans.Server)

	// Nothing found: the servers' errors, if any; a wait that ended with no answer.
	_, msg = readLocations(ws, tools.LSPReply{Server: "gopls", Results: []tools.LSPResult{
		{Server: "gopls", Error: json.RawMessage(`{"code":-32603,"message":"no package for file"}`)},
		{Server: "other", Error: json.RawMessage(`"crashed"`)},
		{Server: "third", Result: json.RawMessage(`[]`)},
	}})
	assert.Equal(t, "gopls: no package for file; other: crashed", msg)
	_, msg = readLocations(ws, tools.LSPReply{Server: "gopls", Results: []tools.LSPResult{{Server: "gopls", Result: json.RawMessage(`null`)}}})
	assert.Empty(t, msg, "no definition is no error")
	_, msg = readLocations(ws, tools.LSPReply{Server: "gopls", TimedOut: true, TimeoutMS: 5000})
	assert.Equal(t, "gopls did not answer within 5000 ms", msg)
}

// Hover.contents in every shape the LSP allows.
func TestReadHover(t *testing.T) {
	for _, c := range []struct{ contents, want string }{
		{`"plain"`, "plain"},
		{`{"kind":"markdown","value":"**doc**"}`, "**doc**"},
		{`{"language":"go","value":"func f()"}`, "```go\nfunc f()\n```"},
		{`["intro",{"language":"go","value":"var x int"}]`, "intro\n\n```go\nvar x int\n```"},
		{`{"kind":"plaintext"}`, ""},
	} {
		ans, msg := readHover(tools.LSPReply{Server: "s", Results: []tools.LSPResult{raw("s", "utf-16", `{"contents":`+c.contents+`}`)}})
		assert.Empty(t, msg)
		assert.Equal(t, c.want, ans.Hover, c.contents)
	}
	ans, _ := readHover(tools.LSPReply{Results: []tools.LSPResult{
		raw("a", "utf-16", `{"contents":"from a"}`), raw("b", "utf-16", `null`), raw("c", "utf-16", `{"contents":"from c"}`),
	}})
	assert.Equal(t, "from a\n\nfrom c", ans.Hover)
	_, msg := readHover(tools.LSPReply{Results: []tools.LSPResult{{Server: "a", Error: json.RawMessage(`{"message":"busy"}`)}}})
	assert.Equal(t, "a: busy", msg)
}

// SymbolInformation and WorkspaceSymbol (location without a range): kind
// names, containers, each symbol once per file and line.
func TestReadSymbols(t *testing.T) {
	ws := newWS(t, plainEditor{})
	greet := "file://" + filepath.Join(ws.Root, "greet.go")
	ans, msg := readSymbols(ws, tools.LSPReply{Server: "gopls", Results: []tools.LSPResult{
		raw("gopls", "utf-16", `[
			{"name":"greet","kind":12,"containerName":"main","location":{"uri":"`+greet+`","range":{"start":{"line":2,"character":5}}}},
			{"name":"greet","kind":12,"location":{"uri":"`+greet+`","range":{"start":{"line":2,"character":9}}}},
			{"name":"main","kind":4,"location":{"uri":"`+greet+`"}},
			{"name":"odd","kind":99,"location":{"uri":"`+greet+`","range":{"start":{"line":2,"character":0}}}},
			{"name":"nowhere","kind":1}]`),
	}})
	assert.Empty(t, msg)
	assert.Equal(t, []symbol{
		{Name: "greet", Kind: "Function", Container: "main", Location: location{Path: filepath.Join(ws.Root, "greet.go"), Line: 3, Col: 6, Text: "func greet() {}"}},
		{Name: "main", Kind: "Package", Location: location{Path: filepath.Join(ws.Root, "greet.go"), Line: 1, Col: 1, Text: "package main"}},
		{Name: "odd", Kind: "99", Location: location{Path: filepath.Join(ws.Root, "greet.go"), Line: 3, Col: 1, Text: "func greet() {}"}},
	}, ans.Symbols)
	assert.Equal(t, 3, ans.Total)
	_, msg = readSymbols(ws, tools.LSPReply{Results: []tools.LSPResult{{Server: "gopls", Error: json.RawMessage(`{"message":"no views"}`)}}})
	assert.Equal(t, "gopls: no views", msg)
}

// Neovim's byte columns become character columns from each file's text;
// severities get their names; a file's diagnostics are in line order.
func TestReadDiagnostics(t *testing.T) {
	ws := newWS(t, plainEditor{})
	u := filepath.Join(ws.Root, "u.go")
	require.NoError(t, os.WriteFile(u, []byte("var s = \"é\" + x\n"), 0o644))
	gone := filepath.Join(ws.Root, "gone.go")
	got := readDiagnostics(ws, []tools.FileDiagnostics{
		{Path: u, Diagnostics: []tools.Diagnostic{
			{Line: 0, Col: 15, Severity: 1, Message: "undefined: x", Source: "compiler"}, // x: byte 15, character 14
			{Line: 0, Col: 0, Severity: 4, Message: "hint"},
			{Line: 3, Col: 2, Severity: 9, Message: "past the end"},
		}},
		{Path: gone, Diagnostics: []tools.Diagnostic{{Line: 1, Col: 4, Severity: 2, Message: "unreadable: byte column"}}},
	})
	assert.Equal(t, []diagnostic{
		{Path: u, Line: 1, Col: 1, Severity: "hint", Message: "hint"},
		{Path: u, Line: 1, Col: 15, Severity: "error", Message: "undefined: x", Source: "compiler"},
		{Path: u, Line: 4, Col: 1, Severity: "error", Message: "past the end"},
		{Path: gone, Line: 2, Col: 5, Severity: "warning", Message: "unreadable: byte column"},
	}, got)
}

func TestURIPath(t *testing.T) {
	for uri, want := range map[string]string{
		"file:///a/b%20c.go":      "/a/b c.go",
		"file:///a/b.go#L3":       "/a/b.go",
		"file:///a/100%25%zz":     "/a/100%%zz",
		"jdt://contents/x.class":  "jdt://contents/x.class",
		"untitled:Untitled-1":     "untitled:Untitled-1",
		"file:///%E2%82%AC/x.txt": "/€/x.txt",
	} {
		got, ok := uriPath(uri)
		assert.True(t, ok, uri)
		assert.Equal(t, want, got, uri)
	}
	for _, uri := range []string{"", "/a/b.go", "1x:/y", ":x"} {
		_, ok := uriPath(uri)
		assert.False(t, ok, uri)
	}
}
