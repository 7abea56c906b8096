package nvim

import (
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
	var ans tools.LSPAnswer
	require.NoError(t, decodeLSP(map[string]any{
		"server": []byte("gopls"), "total": int64(2),
		"locations": []any{map[string]any{"path": "/w/a.go", "line": int64(3), "col": int64(6), "text": "func a()"}},
		"symbols":   []any{}, // Lua's {}
	}, &ans))
	assert.Equal(t, tools.LSPAnswer{Server: "gopls", Total: 2, Locations: []tools.Location{{Path: "/w/a.go", Line: 3, Col: 6, Text: "func a()"}}}, ans)
	var w struct {
		Files []tools.FileDiagnostics `json:"files"`
	}
	require.NoError(t, decodeLSP([]any{}, &w), "an empty Lua table is an empty object")
	assert.Empty(t, w.Files)
}

// fido.lsp without any language server: a clear error naming the file type,
// the hidden buffer it loaded is given back; position helpers count UTF-16
// units; on Neovim 0.7 every entry point says it needs 0.8.
func TestLuaLSPWithoutServer(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	path := filepath.Join(n.Dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("alpha beta\n"), 0o644))
	got := make(chan map[string]any, 4)
	require.NoError(t, n.RegisterHandler("fido_lsp", func(id int, res map[string]any) { got <- res }))
	var started map[string]any
	n.Lua(t, &started, `local chan, path = ...
return require("fido.lsp").query(chan, 1, { method = "definition", path = path, line = 1, symbol = "beta" })`, n.ChannelID(), path)
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

	// A symbol that is not on the line.
	n.Lua(t, nil, `local chan, path = ...
require("fido.lsp").query(chan, 2, { method = "hover", path = path, line = 1, symbol = "alp" })`, n.ChannelID(), path)
	res := <-got
	assert.Equal(t, `"alp" does not occur as a whole word on line 1: alpha beta`, res["error"])

	var pos []int
	n.Lua(t, &pos, `local l = require("fido.lsp")
local line = "a😀é b"
return { l._units_of(line, 5, "utf-16"), l._units_of(line, 5, "utf-32"), l._units_of(line, 5, "utf-8"),
  l._byte_of(line, 3, "utf-16"), l._byte_of(line, 2, "utf-32"), l._find_symbol("xb b_c b", "b") }`)
	assert.Equal(t, []int{3, 2, 5, 5, 5, 8}, pos)
}
