package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// These tests use a real language server nobody here wrote: gopls, installed
// by scripts/ensure-tools (.ci/run) outside the repository. Under CI a
// missing gopls fails the test; it never skips there.

// requireGopls returns gopls's path.
func requireGopls(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("gopls")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("gopls is not on PATH (CI is set; scripts/ensure-tools installs it): %v", err)
		}
		t.Skipf("gopls is not on PATH (install: go install golang.org/x/tools/gopls@v0.23.0): %v", err)
	}
	return p
}

// goEnv is the value of a `go env` variable (empty when go is missing).
func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

const (
	greetGo  = "package main\n\n// greet says hello.\nfunc greet(name string) string {\n\treturn \"hello \" + name\n}\n"
	mainGo   = "package main\n\nfunc main() {\n\t_ = greet(\"a\")\n\t_ = greet(\"b\")\n}\n"
	brokenGo = "package main\n\nfunc broken() int {\n\treturn missing\n}\n"
)

// startGoFido starts Fido in a small Go module whose buffers get gopls
// through a minimal vim.lsp.start configuration (the user's LSP setup).
func startGoFido(t *testing.T) *fido {
	t.Helper()
	ws := t.TempDir()
	for name, text := range map[string]string{
		"go.mod": "module example.com/lsptest\n\ngo 1.22\n", "greet.go": greetGo, "main.go": mainGo, "broken.go": brokenGo,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	f := startFido(t, "", ws)
	// Stop gopls before Neovim and the temporary directories go (it writes
	// its caches under them until it exits).
	t.Cleanup(func() {
		_ = f.ExecLua(`if vim.lsp.get_clients then
			vim.lsp.stop_client(vim.lsp.get_clients())
			vim.wait(5000, function() return #vim.lsp.get_clients({ _uninitialized = true }) == 0 end, 20)
		end`, nil)
	})
	if cache := goEnv("GOCACHE"); cache != "" {
		f.Lua(t, nil, `vim.env.GOCACHE = ...`, cache)
	}
	f.Lua(t, nil, `
		local root = ...
		require("fido").setup({ lsp = { wait_ms = 20000, request_timeout_ms = 30000 } })
		vim.api.nvim_create_autocmd("FileType", {
			pattern = "go",
			callback = function(args)
				if vim.lsp.start then
					vim.lsp.start({ name = "gopls", cmd = { "gopls" }, root_dir = root }, { bufnr = args.buf })
				end
			end,
		})`, ws)
	return f
}

// turn runs one model turn that makes a single tool call and returns the
// tool result the model saw.
func (f *fido) toolTurn(t *testing.T, n *int, tool, args string) string {
	t.Helper()
	*n++
	id := "call_" + strconv.Itoa(*n)
	before := len(f.srv.Requests())
	f.srv.Enqueue(
		llmtest.Reply().ToolCall(id, tool, args, 2).Finish("tool_calls").Usage(10, 1, 0, 0),
		llmtest.Text("ok"),
	)
	require.NoError(t, f.Command("Fido step "+strconv.Itoa(*n)))
	f.WaitFor(t, `require("fido").status().usage.calls >= `+strconv.Itoa(before+2)+` and require("fido").status().state == "idle"`,
		90*time.Second, `require("fido").status()`)
	reqs := f.srv.Requests()
	require.Len(t, reqs, before+2)
	last := reqs[before+1]
	assert.Equal(t, "tool", last.Get("messages.@reverse.0.role").String())
	return last.Get("messages.@reverse.0.content").String()
}

// After a patch, the tool result names the diagnostics it introduced (and
// only those), says "clean" after the fix, and the LSP tools find
// definitions and callers — also from a subagent. On Neovim 0.7 the tools
// say they need 0.8 and patch results stay as they were.
func TestE2ELSPWithGopls(t *testing.T) {
	f := startGoFido(t)
	n := 0
	if !f.Bool(t, `vim.fn.has("nvim-0.8") == 1`) {
		res := f.toolTurn(t, &n, "lsp_definition", `{"path":"main.go","line":4,"symbol":"greet"}`)
		assert.Contains(t, res, "need Neovim 0.8 or later")
		res = f.toolTurn(t, &n, "patch", `{"operations":[{"path":"main.go","search":"\t_ = greet(\"b\")\n","replace":"\t_ = greet(\"b\")\n\tfoo()\n"}]}`)
		assert.Contains(t, res, "op 1 ✓ main.go")
		assert.NotContains(t, res, "LSP")
		return
	}
	requireGopls(t)

	// A patch that introduces `undefined: foo`: the result names it.
	res := f.toolTurn(t, &n, "patch", `{"operations":[{"path":"main.go","search":"\t_ = greet(\"b\")\n","replace":"\t_ = greet(\"b\")\n\tfoo()\n"}]}`)
	assert.Contains(t, res, "op 1 ✓ main.go")
	assert.Contains(t, res, "this edit introduced 1 in main.go")
	assert.Contains(t, res, "main.go:6:2: error: undefined: foo")
	assert.NotContains(t, res, "missing", "another file's error is not this edit's")

	// The fix: clean.
	res = f.toolTurn(t, &n, "patch", `{"operations":[{"path":"main.go","search":"\tfoo()\n","replace":""}]}`)
	assert.Contains(t, res, "main.go is clean", res)
	assert.NotContains(t, res, "undefined")

	// A pre-existing error in the patched file, moved by the edit, is not
	// reported as introduced.
	res = f.toolTurn(t, &n, "patch", `{"operations":[{"path":"broken.go","search":"package main\n","replace":"package main\n\n// broken is broken.\n// It stays broken.\n"}]}`)
	assert.Contains(t, res, "no new errors or warnings in broken.go (it still has 1 from before)", res)
	assert.NotContains(t, res, "undefined: missing")

	// lsp_definition with symbol finds the function's file and line.
	res = f.toolTurn(t, &n, "lsp_definition", `{"path":"main.go","line":4,"symbol":"greet"}`)
	assert.Contains(t, res, "greet.go:4:6: func greet(name string) string", res)

	// lsp_references lists its callers.
	res = f.toolTurn(t, &n, "lsp_references", `{"path":"greet.go","line":4,"symbol":"greet"}`)
	assert.Contains(t, res, `main.go:4:6: _ = greet("a")`, res)
	assert.Contains(t, res, `main.go:5:6: _ = greet("b")`, res)

	// lsp_diagnostics of the broken file; lsp_hover shows the doc comment.
	res = f.toolTurn(t, &n, "lsp_diagnostics", `{"path":"broken.go"}`)
	assert.Contains(t, res, "broken.go:7:9: error: undefined: missing (compiler)", res)
	res = f.toolTurn(t, &n, "lsp_hover", `{"path":"main.go","line":4,"symbol":"greet"}`)
	assert.Contains(t, res, "greet says hello", res)

	// A command that changes a file loaded in Neovim (here the hidden
	// buffer the patches loaded): after the buffer re-check, the same report.
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, "main.next"), []byte("package main\n\nfunc main() {\n\t_ = greet(\"a\")\n\tbar()\n}\n"), 0o644))
	f.Lua(t, nil, `vim.ui.select = function(items, _, cb)
  for i, it in ipairs(items) do if it == "Run once" then return cb(it, i) end end
  cb(nil, nil)
end`)
	res = f.toolTurn(t, &n, "bash_exec", `{"command":"cp main.next main.go"}`)
	assert.Contains(t, res, "LSP (gopls): this edit introduced 1 in main.go:\nmain.go:5:2: error: undefined: bar (compiler)", res)

	// A subagent may call them (read-only).
	before := len(f.srv.Requests())
	answer := `{"status":"completed","summary":"greet is called twice.","findings":[],"recommended_next_steps":[],"tests_to_run":[],"uncertainties":[]}`
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_d", "delegate", `{"task":"find the callers of greet"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("call_s", "lsp_references", `{"path":"greet.go","line":4,"symbol":"greet"}`, 1).Finish("tool_calls"),
		llmtest.Reply().Content(answer).Finish("stop"),
		llmtest.Text("done"),
	)
	require.NoError(t, f.Command("Fido who calls greet?"))
	f.WaitFor(t, `require("fido").status().usage.calls >= `+strconv.Itoa(before+4)+` and require("fido").status().state == "idle"`,
		90*time.Second, `require("fido").status()`)
	reqs := f.srv.Requests()
	require.Len(t, reqs, before+4)
	sub := reqs[before+2].Get("messages.@reverse.0.content").String()
	assert.Contains(t, sub, `main.go:4:6: _ = greet("a")`, sub)
	assert.NotContains(t, sub, "permission_denied")

	// Always advertised, in the stable order.
	names := reqs[0].Get("tools.#.function.name").String()
	assert.Contains(t, names, `"lsp_definition","lsp_diagnostics","lsp_hover","lsp_references","lsp_symbols"`)
	assert.Contains(t, reqs[0].Get("messages.0.content").String(), "# Language servers (lsp_*)")
}
