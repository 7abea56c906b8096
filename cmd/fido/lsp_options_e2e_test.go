package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setupLSP applies setup({ lsp = … }) (setup starts from the defaults, so
// every lsp option the test relies on is given).
func (f *fido) setupLSP(t *testing.T, diagnostics bool, waitMS, requestTimeoutMS int) {
	t.Helper()
	var ok bool
	f.Lua(t, &ok, `local d, w, r = ...
return require("fido").setup({ lsp = { diagnostics = d, wait_ms = w, request_timeout_ms = r } })`, diagnostics, waitMS, requestTimeoutMS)
	require.True(t, ok, "setup accepted the options")
}

// setup({ lsp = { diagnostics = false } }) stops the report of the
// diagnostics an edit introduced (compare TestE2ELSPWithGopls), while the
// lsp_* tools keep working; turning it on again brings the report back.
func TestE2ELSPDiagnosticsOff(t *testing.T) {
	f := startGoFido(t)
	f.setupLSP(t, false, 20000, 30000)
	n := 0
	addFoo := `{"operations":[{"path":"main.go","search":"\t_ = greet(\"b\")\n","replace":"\t_ = greet(\"b\")\n\tfoo()\n"}]}`
	if !f.Bool(t, `vim.fn.has("nvim-0.8") == 1`) {
		res := f.toolTurn(t, &n, "patch", addFoo)
		assert.Contains(t, res, "op 1 ✓ main.go")
		assert.NotContains(t, res, "LSP")
		return
	}
	requireGopls(t)

	// The patch introduces `undefined: foo`; its result says nothing of it.
	res := f.toolTurn(t, &n, "patch", addFoo)
	assert.Contains(t, res, "op 1 ✓ main.go")
	assert.NotContains(t, res, "LSP", res)
	assert.NotContains(t, res, "undefined", res)
	assert.NotContains(t, res, "introduced", res)

	// gopls is there and sees the error: lsp_diagnostics still answers.
	res = f.toolTurn(t, &n, "lsp_diagnostics", `{"path":"main.go"}`)
	assert.Contains(t, res, "main.go:6:2: error: undefined: foo", res)

	// On again: the next edit's new error is reported, the old one is not.
	f.setupLSP(t, true, 20000, 30000)
	res = f.toolTurn(t, &n, "patch", `{"operations":[{"path":"main.go","search":"\tfoo()\n","replace":"\tfoo()\n\tbar()\n"}]}`)
	assert.Contains(t, res, "this edit introduced 1 in main.go", res)
	assert.Contains(t, res, "main.go:7:2: error: undefined: bar", res)
	assert.NotContains(t, res, "undefined: foo", res)
}

// slowServer is an in-process language server (vim.lsp.start with a cmd
// function) for *.txt buffers: it initializes, answers textDocument/definition
// at once and never answers hover or workspace/symbol. _G.slow records the
// requests and the $/cancelRequest notifications it got.
const slowServer = `local root = ...
_G.slow = { requests = {}, cancels = {} }
local function server(dispatchers)
  local closing, n = false, 0
  return {
    request = function(method, params, callback)
      n = n + 1
      table.insert(_G.slow.requests, method)
      if method == "initialize" then
        vim.schedule(function()
          callback(nil, { capabilities = { textDocumentSync = 1, definitionProvider = true, hoverProvider = true, workspaceSymbolProvider = true } })
        end)
      elseif method == "shutdown" then
        vim.schedule(function() callback(nil, vim.NIL) end)
      elseif method == "textDocument/definition" then
        local uri = params.textDocument.uri
        vim.schedule(function()
          callback(nil, { uri = uri, range = { start = { line = 0, character = 6 }, ["end"] = { line = 0, character = 10 } } })
        end)
      end
      return true, n
    end,
    notify = function(method, params)
      if method == "$/cancelRequest" then
        table.insert(_G.slow.cancels, params.id)
      elseif method == "exit" then
        closing = true
        vim.schedule(function() dispatchers.on_exit(0, 0) end)
      end
      return true
    end,
    is_closing = function() return closing end,
    terminate = function() closing = true end,
  }
end
vim.api.nvim_create_autocmd("FileType", {
  pattern = "text",
  callback = function(args)
    if vim.lsp.start then
      vim.lsp.start({ name = "slowls", cmd = server, root_dir = root }, { bufnr = args.buf })
    end
  end,
})`

// setup({ lsp = { request_timeout_ms = N } }): an lsp_* request the server
// does not answer in time ends after about N ms with an error result naming
// the server and N (not the host's own, later timeout), and the request is
// cancelled at the server; a request it answers still works.
func TestE2ELSPRequestTimeout(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("alpha beta\n"), 0o644))
	f := startFido(t, "", ws)
	const timeoutMS = 400
	f.setupLSP(t, true, 2000, timeoutMS)
	n := 0
	if !f.Bool(t, `vim.fn.has("nvim-0.8") == 1`) {
		res := f.toolTurn(t, &n, "lsp_hover", `{"path":"notes.txt","line":1,"symbol":"beta"}`)
		assert.Contains(t, res, "need Neovim 0.8 or later")
		return
	}
	f.Lua(t, nil, slowServer, ws)

	// The control: the server is up and answers definition.
	res := f.toolTurn(t, &n, "lsp_definition", `{"path":"notes.txt","line":1,"symbol":"beta"}`)
	assert.Contains(t, res, "notes.txt:1:7: alpha beta", res)
	assert.NotContains(t, res, "did not answer", res)

	want := "slowls did not answer within " + strconv.Itoa(timeoutMS) + " ms"
	for _, c := range []struct{ tool, args string }{
		{"lsp_hover", `{"path":"notes.txt","line":1,"symbol":"beta"}`},
		{"lsp_symbols", `{"query":"beta"}`},
	} {
		start := time.Now()
		res = f.toolTurn(t, &n, c.tool, c.args)
		took := time.Since(start)
		t.Logf("%s: %s", c.tool, took)
		assert.Contains(t, res, `{"error":"`+c.tool+`: `+want+`"}`, res)
		assert.NotContains(t, res, "no answer from Neovim", "Lua's timeout answers, not the host's")
		// The default (5000 ms) or the host's fallback (+3 s) would take longer.
		assert.Less(t, took, 4*time.Second, "%s took %s", c.tool, took)
	}

	var got struct {
		Requests []string `msgpack:"requests"`
		Cancels  []int    `msgpack:"cancels"`
	}
	f.Lua(t, &got, `return _G.slow`)
	assert.Contains(t, got.Requests, "textDocument/hover")
	assert.Contains(t, got.Requests, "workspace/symbol")
	assert.Len(t, got.Cancels, 2, "each timed-out request is cancelled at the server: %v", got)
}
