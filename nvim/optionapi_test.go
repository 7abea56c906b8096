package nvim_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// The option functions Neovim deprecated at API level 11 (0.10), matched as
// whole names so nvim_get_option_value, nvim_set_option_value and
// nvim_get_all_options_info stay allowed. The replacements below also work
// on Debian's 0.7.2.
var deprecatedOptionCall = regexp.MustCompile(`\bnvim_(?:(?:buf|win)_)?(?:get|set)_option\b|\bnvim_get_option_info\b`)

var optionReplacement = map[string]string{
	"nvim_buf_get_option":  "vim.bo[buf].name (like :setlocal on every version)",
	"nvim_buf_set_option":  "vim.bo[buf].name = value (like :setlocal on every version)",
	"nvim_win_get_option":  "vim.wo[win].name (from 0.10 the effective value; vim.wo[win][0].name for the window's own one)",
	"nvim_win_set_option":  "vim.wo[win].name = value (the scope nvim_win_set_option had, on 0.7.2 through 0.12)",
	"nvim_get_option":      "vim.o.name / vim.go.name, or nvim_get_option_value(name, { scope = ... }) (0.7.2 takes no win/buf key)",
	"nvim_set_option":      "vim.o.name = value / vim.go.name = value, or nvim_set_option_value(name, value, { scope = ... })",
	"nvim_get_option_info": "nvim_get_all_options_info()[name] (nvim_get_option_info2 needs 0.9)",
}

// go-client's wrappers of the same deprecated functions (nvim/api.go), on
// *nvim.Nvim and *nvim.Batch.
var deprecatedGoClientOption = map[string]string{
	"SetBufferOption": "nvim_buf_set_option",
	"BufferOption":    "nvim_buf_get_option",
	"SetWindowOption": "nvim_win_set_option",
	"WindowOption":    "nvim_win_get_option",
	"SetOption":       "nvim_set_option",
	"Option":          "nvim_get_option",
}

const goClientImport = "github.com/neovim/go-client/nvim"

// deprecatedOptionTextUses reports each line of src naming a deprecated
// option function (Lua, Vimscript, or Lua and RPC names inside Go strings).
func deprecatedOptionTextUses(name string, src []byte) []string {
	var out []string
	for i, line := range strings.Split(string(src), "\n") {
		for _, fn := range deprecatedOptionCall.FindAllString(line, -1) {
			out = append(out, fmt.Sprintf("%s:%d: %s is deprecated since Neovim 0.10; use %s", name, i+1, fn, optionReplacement[fn]))
		}
	}
	return out
}

// deprecatedGoClientUses reports calls of go-client's deprecated option
// methods in a Go file that imports go-client. The method names are matched
// without type information; only files importing go-client are looked at,
// so another type's Option method elsewhere does not count.
func deprecatedGoClientUses(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	imports := false
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == goClientImport {
			imports = true
		}
	}
	if !imports {
		return nil, nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if fn, ok := deprecatedGoClientOption[sel.Sel.Name]; ok {
			out = append(out, fmt.Sprintf("%s: go-client's %s calls %s, deprecated since Neovim 0.10; use ExecLua with vim.bo/vim.wo/vim.o (any version), or Request(\"nvim_set_option_value\", …) with only a \"scope\" key (0.7.2 rejects win/buf)",
				fset.Position(sel.Sel.Pos()), sel.Sel.Name, fn))
		}
		return true
	})
	return out, nil
}

// No deprecated option API comes back: the plugin's Lua and Vimscript, the
// Lua that Go sends through ExecLua (tests included), raw RPC names in Go
// and go-client's wrappers. README.md and doc/fido.txt are checked too, so
// no example shows users the old calls. CHANGELOG.md records history and
// testdata holds recorded material; neither is code.
func TestNoDeprecatedOptionAPI(t *testing.T) {
	t.Parallel()
	root := nvimtest.RepoRoot(t)
	self, err := filepath.Abs("optionapi_test.go")
	require.NoError(t, err)
	var found []string
	scanned := map[string]int{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		doc := rel == "README.md" || (filepath.Dir(rel) == "doc" && ext == ".txt")
		if path == self || !(ext == ".go" || ext == ".lua" || ext == ".vim" || doc) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned[ext]++
		found = append(found, deprecatedOptionTextUses(rel, src)...)
		if ext == ".go" {
			uses, err := deprecatedGoClientUses(rel, src)
			if err != nil {
				return err
			}
			found = append(found, uses...)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, scanned[".lua"], "no Lua files under %s", root)
	require.NotZero(t, scanned[".go"], "no Go files under %s", root)
	if len(found) > 0 {
		t.Errorf("deprecated option API is back; Fido supports Neovim 0.7.2 through 0.12, so use the replacement given:\n%s", strings.Join(found, "\n"))
	}
}

// The scanners flag what they are for and nothing else.
func TestDeprecatedOptionScanners(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{`api.nvim_buf_set_option(b, "modifiable", false)`, []string{"nvim_buf_set_option"}},
		{`pcall(vim.api.nvim_win_set_option, w, "wrap", true)`, []string{"nvim_win_set_option"}},
		{`if vim.api.nvim_buf_get_option(b, "modified") and api.nvim_win_get_option(w, "diff") then`, []string{"nvim_buf_get_option", "nvim_win_get_option"}},
		{`v.Request("nvim_set_option", nil, "columns", 80)`, []string{"nvim_set_option"}},
		{`vim.api.nvim_get_option("columns")`, []string{"nvim_get_option"}},
		{`vim.api.nvim_get_option_info("wrap")`, []string{"nvim_get_option_info"}},
		{`api.nvim_set_option_value("winbar", v, { scope = "local" })`, nil},
		{`api.nvim_get_option_value("wrap", {}); api.nvim_get_all_options_info(); api.nvim_get_option_info2("wrap", {})`, nil},
		{`vim.bo[buf].modifiable = false; vim.wo[win].wrap = true`, nil},
	} {
		var got []string
		for _, line := range deprecatedOptionTextUses("x.lua", []byte(tc.src)) {
			got = append(got, strings.Fields(line)[1])
		}
		assert.Equal(t, tc.want, got, tc.src)
	}

	goSrc := func(imp, body string) []byte {
		return []byte("package p\n\nimport " + imp + "\n\nfunc f(v *nvim.Nvim, b *nvim.Batch, o interface{ Option(string) }) {\n" + body + "\n}\n")
	}
	uses, err := deprecatedGoClientUses("p.go", goSrc(`"github.com/neovim/go-client/nvim"`, `_ = v.SetBufferOption(1, "modifiable", false)
	b.SetWindowOption(2, "wrap", true)
	var s string
	_ = v.Option("columns", &s)
	_ = v.SetOptionValue("winbar", "", nil)`))
	require.NoError(t, err)
	require.Len(t, uses, 3)
	assert.Contains(t, uses[0], "p.go:6:7: go-client's SetBufferOption calls nvim_buf_set_option")
	assert.Contains(t, uses[1], "SetWindowOption calls nvim_win_set_option")
	assert.Contains(t, uses[2], "Option calls nvim_get_option")

	uses, err = deprecatedGoClientUses("q.go", goSrc(`nvim "example.com/other"`, `o.Option("x")`))
	require.NoError(t, err)
	assert.Empty(t, uses, "a file without go-client is not checked for method names")
}
