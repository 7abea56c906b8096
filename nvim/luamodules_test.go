package nvim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// luaLayers places every module of lua/fido in a layer (STYLE.md, Lua): a
// module requires only modules of its own layer or below, never one above,
// and the graph has no cycle. Leaves require nothing of Fido's; entry points
// (what Neovim or the user calls: :checkhealth, user commands, 'omnifunc')
// are required by nobody. A new module gets a line here.
var luaLayers = map[string]int{
	// 0: leaves, knowing nothing of Fido's other modules.
	"fido.config": 0, "fido.highlights": 0, "fido.events": 0, "fido.status": 0, "fido.mcp": 0,
	"fido.lualine": 0, "fido.windows": 0, "fido.questionwin": 0, "fido.expert": 0,
	"fido.lsp.clients": 0, "fido.lsp.buffers": 0,
	// 1: the Go job, mentions and what the editor knows, the language
	// servers, surfaces that need only those.
	"fido.host": 1, "fido.mentions": 1, "fido.context": 1, "fido.slash": 1,
	"fido.lsp": 1, "fido.lsp.diagnostics": 1, "fido.lsp.queries": 1, "fido.lsp.edits": 1,
	"fido.planwin": 1, "fido.activity": 1, "fido.permissions": 1, "fido.review": 1,
	// 2: the questions and the sidebar.
	"fido.questions": 2, "fido.turn": 2, "fido.layout": 2,
	// 3: what Go calls, and the statuslines it drives.
	"fido.statusline": 3, "fido.bridge": 3,
	// 4: the public API.
	"fido": 4,
	// 5: entry points.
	"fido.health": 5, "fido.commands": 5, "fido.complete": 5,
}

var luaLeaves = []string{"fido.config", "fido.highlights", "fido.events"}

var luaEntryPoints = []string{"fido.health", "fido.commands", "fido.complete"}

// The Lua modules form a DAG of layers, with every require at the top of
// its module (a require hidden in a function to dodge a cycle is a cycle).
func TestLuaModulesFormLayers(t *testing.T) {
	mods := readLuaModules(t, filepath.Join(nvimtest.RepoRoot(t), "lua"))
	require.NotEmpty(t, mods)
	graph := map[string][]string{}
	for name, m := range mods {
		rank, placed := luaLayers[name]
		assert.True(t, placed, "%s has no layer in luaLayers", name)
		for _, r := range m.requires {
			if r.module == computed {
				t.Errorf("%s:%d: require of a computed name", m.path, r.line)
				continue
			}
			graph[name] = append(graph[name], r.module)
			if _, ok := mods[r.module]; !ok {
				t.Errorf("%s:%d requires %s, which does not exist", m.path, r.line, r.module)
			}
			if !r.topLevel {
				t.Errorf("%s:%d: %s is required inside a function or block, not at the top of the module", m.path, r.line, r.module)
			}
			if other, ok := luaLayers[r.module]; ok && placed && other > rank {
				t.Errorf("%s (layer %d) requires %s (layer %d, above it)", name, rank, r.module, other)
			}
		}
	}
	for _, leaf := range luaLeaves {
		assert.Empty(t, graph[leaf], "the leaf %s requires Fido's modules", leaf)
	}
	for _, e := range luaEntryPoints {
		for from, tos := range graph {
			assert.NotContains(t, tos, e, "%s requires the entry point %s", from, e)
		}
	}
	edges, hidden := 0, 0
	for _, m := range mods {
		for _, r := range m.requires {
			edges++
			if !r.topLevel {
				hidden++
			}
		}
	}
	cycles := luaCycles(graph)
	largest := 0
	if len(cycles) > 0 {
		largest = len(cycles[0])
	}
	t.Logf("%d modules, %d requires of Fido's modules (%d not at the top), largest cycle: %d modules", len(mods), edges, hidden, largest)
	for _, c := range cycles {
		t.Errorf("a require cycle runs through these %d modules: %s", len(c), strings.Join(c, ", "))
	}
}

// Lua reads no file itself (STYLE.md): what a language server names is read
// by Go through its confined readers; Neovim loads buffers, and the Lua
// reads them through the API. The host's own log is the one file Lua opens,
// to append.
func TestLuaReadsNoFiles(t *testing.T) {
	root := filepath.Join(nvimtest.RepoRoot(t), "lua")
	readers := map[string]bool{"io.lines": true, "io.read": true, "io.input": true, "io.popen": true, "io.open": true,
		"vim.fn.readfile": true, "vim.fn.readblob": true, "fs_open": true, "fs_read": true, "fs_scandir": true}
	found := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".lua") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		toks := luaTokens(string(src))
		for i, tk := range toks {
			if tk.kind != 'n' || i > 0 && toks[i-1].text == "." {
				continue // a name's first part starts the dotted name
			}
			name := tk.text
			for j := i; j+2 < len(toks) && toks[j+1].text == "." && toks[j+2].kind == 'n'; j += 2 {
				name += "." + toks[j+2].text
			}
			last := name[strings.LastIndexByte(name, '.')+1:]
			if !readers[name] && !readers[last] && !strings.HasSuffix(name, ".readfile") {
				continue
			}
			found++
			if name == "io.open" && filepath.ToSlash(rel) == "fido/host.lua" {
				continue // the log, opened to append
			}
			t.Errorf("%s:%d: %s reads a file", rel, tk.line, name)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, found, "the scan sees the log's io.open")
}

// The parser behind TestLuaModulesFormLayers sees requires wherever they
// hide, and not in strings or comments.
func TestLuaRequireScanner(t *testing.T) {
	src := `local a = require("fido.a")
-- require("fido.comment")
--[==[ require("fido.long") ]==]
local s = "require('fido.string')" .. [[require("fido.longstring")]]
local function f()
  local b = require("fido.b")
  if x then pcall(require, "fido.c") end
end
do local d = require "fido.d" end
local e = require(name)
M.opt = { ["end"] = 1, fn = function() end }
local g = require('fido.g')`
	var got []string
	for _, r := range scanLuaRequires(src) {
		got = append(got, fmt.Sprintf("%s:%d:%v", r.module, r.line, r.topLevel))
	}
	assert.Equal(t, []string{"fido.a:1:true", "fido.b:6:false", "fido.c:7:false", "fido.d:9:false", "<computed>:10:true", "fido.g:12:true"}, got)
	assert.Equal(t, [][]string{{"a", "b", "c"}}, luaCycles(map[string][]string{"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": nil}))
}

type luaModule struct {
	path     string
	requires []luaRequire
}

// computed is the module of a require whose name is not a string literal.
const computed = "<computed>"

type luaRequire struct {
	module   string // or computed
	line     int
	topLevel bool // at the top of the module: a `local x = require("m")` statement outside every block
}

// readLuaModules maps module names (fido, fido.lsp, fido.lsp.clients) to
// their files under dir.
func readLuaModules(t *testing.T, dir string) map[string]luaModule {
	t.Helper()
	out := map[string]luaModule{}
	err := filepath.WalkDir(filepath.Join(dir, "fido"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".lua") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".lua"), "/", ".")
		name = strings.TrimSuffix(name, ".init")
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[name] = luaModule{path: rel, requires: scanLuaRequires(string(src))}
		return nil
	})
	require.NoError(t, err)
	return out
}

type luaToken struct {
	kind byte // 'n' name, 's' string, 'p' punctuation
	text string
	line int
}

// luaTokens splits Lua source into names, strings and punctuation,
// dropping comments, whitespace and numbers.
func luaTokens(src string) []luaToken {
	var out []luaToken
	line := 1
	longClose := func(i int) (string, int) { // at '[': "]==]" and the index after "[==["
		j := i + 1
		for j < len(src) && src[j] == '=' {
			j++
		}
		if j < len(src) && src[j] == '[' {
			return "]" + strings.Repeat("=", j-i-1) + "]", j + 1
		}
		return "", i
	}
	skipTo := func(i int, end string) int { // index after end, counting lines
		k := strings.Index(src[i:], end)
		if k < 0 {
			k = len(src) - i - len(end)
		}
		line += strings.Count(src[i:i+k], "\n")
		return i + k + len(end)
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "--"):
			if i+2 < len(src) && src[i+2] == '[' {
				if end, j := longClose(i + 2); end != "" {
					i = skipTo(j, end)
					continue
				}
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			j, start := i+1, line
			var b strings.Builder
			for j < len(src) && src[j] != c {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				if src[j] == '\n' {
					line++
				}
				b.WriteByte(src[j])
				j++
			}
			out = append(out, luaToken{'s', b.String(), start})
			i = j + 1
		case c == '[':
			if end, j := longClose(i); end != "" {
				start := line
				k := skipTo(j, end)
				out = append(out, luaToken{'s', src[j : k-len(end)], start})
				i = k
				continue
			}
			out = append(out, luaToken{'p', "[", line})
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, luaToken{'n', src[i:j], line})
			i = j
		case c >= '0' && c <= '9':
			for i < len(src) && (src[i] == '.' || src[i] == 'x' || src[i] >= '0' && src[i] <= '9' || src[i] >= 'a' && src[i] <= 'f' || src[i] >= 'A' && src[i] <= 'F') {
				i++
			}
		default:
			out = append(out, luaToken{'p', string(c), line})
			i++
		}
	}
	return out
}

// scanLuaRequires finds every require (direct, or through pcall) and
// whether it is a top-level `local x = require(...)` statement. Blocks are
// counted by their openers (function, if, do, repeat) and closers (end,
// until); while and for open with their do.
func scanLuaRequires(src string) []luaRequire {
	toks := luaTokens(src)
	var out []luaRequire
	depth := 0
	for i, tk := range toks {
		if tk.kind != 'n' {
			continue
		}
		afterDot := i > 0 && toks[i-1].kind == 'p' && (toks[i-1].text == "." || toks[i-1].text == ":")
		switch tk.text {
		case "function", "if", "do", "repeat":
			if !afterDot {
				depth++
			}
		case "end", "until":
			if !afterDot {
				depth--
			}
		case "require":
			if afterDot {
				continue
			}
			j := i + 1
			if j < len(toks) && toks[j].kind == 'p' && (toks[j].text == "(" || toks[j].text == ",") {
				j++
			}
			r := luaRequire{module: computed, line: tk.line}
			if j < len(toks) && toks[j].kind == 's' {
				if r.module = toks[j].text; !strings.HasPrefix(r.module, "fido") {
					continue // Neovim's own modules
				}
			}
			// local NAME = require ( "m" ) | local NAME = require "m"
			r.topLevel = depth == 0 && i >= 3 && toks[i-1].text == "=" && toks[i-2].kind == 'n' && toks[i-3].text == "local"
			out = append(out, r)
		}
	}
	return out
}

// luaCycles returns the strongly connected components of more than one
// module (and self-loops), each sorted, the largest first.
func luaCycles(g map[string][]string) [][]string {
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			self := len(c) == 1 && contains(g[v], v)
			if len(c) > 1 || self {
				sort.Strings(c)
				out = append(out, c)
			}
		}
	}
	names := make([]string, 0, len(g))
	for v := range g {
		names = append(names, v)
	}
	sort.Strings(names)
	for _, v := range names {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
