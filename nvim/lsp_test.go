package nvim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
	"github.com/fido-nvim/fido/tools"
)

func TestLSPCallsRouting(t *testing.T) {
	var c lspCalls
	id1, ch1 := c.add()
	id2, ch2 := c.add()
	assert.NotEqual(t, id1, id2)
	c.deliver(id2, map[string]any{"error": "x"})
	c.deliver(id2, "late: dropped")
	c.deliver(99, "unknown: dropped")
	assert.Equal(t, map[string]any{"error": "x"}, <-ch2)
	c.drop(id1)
	c.deliver(id1, "after drop")
	select {
	case v := <-ch1:
		t.Fatalf("dropped call got %v", v)
	default:
	}
}

func TestDecodeLSP(t *testing.T) {
	var rep tools.LSPReply
	require.NoError(t, decodeLSP(map[string]any{
		"server": []byte("gopls"), "timeout_ms": int64(5000),
		"results": []any{map[string]any{"server": "gopls", "encoding": "utf-16",
			"result": []any{map[string]any{"uri": []byte("file:///w/a.go"), "range": map[string]any{"start": map[string]any{"line": int64(2), "character": int64(5)}}}}}},
		"files": []any{}, // Lua's {}
	}, &rep))
	assert.Equal(t, tools.LSPReply{Server: "gopls", TimeoutMS: 5000, Results: []tools.LSPResult{{Server: "gopls", Encoding: "utf-16",
		Result: json.RawMessage(`[{"range":{"start":{"character":5,"line":2}},"uri":"file:///w/a.go"}]`)}}}, rep)
	var w struct {
		Files []tools.FileDiagnostics `json:"files"`
	}
	require.NoError(t, decodeLSP([]any{}, &w), "an empty Lua table is an empty object")
	assert.Empty(t, w.Files)
}

// fido.lsp without any language server: a clear error naming the file type,
// the hidden buffer it loaded is given back; a query takes the position the
// host computed; on Neovim 0.7 every entry point says it needs 0.8.
func TestLuaLSPWithoutServer(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	path := filepath.Join(n.Dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("alpha beta\n"), 0o644))
	got := make(chan map[string]any, 4)
	require.NoError(t, n.RegisterHandler("fido_lsp", func(id int, res map[string]any) { got <- res }))
	var started map[string]any
	n.Lua(t, &started, `local chan, path = ...
return require("fido.lsp").query(chan, 1, { method = "definition", path = path,
  position = { line = 0, ["utf-8"] = 6, ["utf-16"] = 6, ["utf-32"] = 6 } })`, n.ChannelID(), path)
	if !n.Bool(t, `vim.fn.has("nvim-0.8") == 1`) {
		assert.Contains(t, started["error"], "need Neovim 0.8 or later")
		n.Lua(t, &started, `return require("fido.lsp").watch(1, 2, { ... })`, path)
		assert.Equal(t, true, started["disabled"])
		return
	}
	assert.NotContains(t, started, "error")
	select {
	case res := <-got:
		assert.Equal(t, "no language server is attached to notes.txt (filetype text); configure one for that file type in Neovim (vim.lsp.enable, nvim-lspconfig), or use ripgrep and read_file instead", res["error"])
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
	}
	assert.True(t, n.Bool(t, `vim.fn.bufnr(...) == -1`, path), "the hidden buffer is wiped again")

	// A missing file, an unknown query.
	n.Lua(t, nil, `local chan, path = ...
require("fido.lsp").query(chan, 2, { method = "hover", path = path .. ".gone", position = { line = 0 } })`, n.ChannelID(), path)
	res := <-got
	assert.Equal(t, "cannot read "+path+".gone (missing, unreadable, not a regular file or too large)", res["error"])
	n.Lua(t, &started, `return require("fido.lsp").query(1, 3, { method = "rename" })`)
	assert.Equal(t, "unknown LSP query rename", started["error"])
}
