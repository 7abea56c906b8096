package agent

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The files of the core form layers (doc.go has the map): every file uses
// only files below it, so the package reads from the session down to the
// message types without a reference running back up. A reference is any
// use, in one file, of a package-level name, method or field declared in
// another.
func TestAgentFilesFormLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package")
	}
	for _, dir := range []string{".", "./conversation"} {
		edges := fileReferences(t, dir)
		require.Empty(t, fileCycle(edges), "%s: these files refer to each other in a circle; move what the lower one needs below it", dir)
	}
}

// fileReferences type-checks the non-test files of the package in dir and
// returns which files each file refers to.
func fileReferences(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", dir).Output()
	require.NoError(t, err)
	exports := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			exports[f[0]] = f[1]
		}
	}
	out, err = exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \",\"}}", dir).Output()
	require.NoError(t, err)
	f := strings.Fields(string(out))
	require.Len(t, f, 3)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range strings.Split(f[2], ",") {
		af, err := parser.ParseFile(fset, filepath.Join(f[1], name), nil, 0)
		require.NoError(t, err)
		files = append(files, af)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check(f[0], fset, files, info)
	require.NoError(t, err)
	edges := map[string][]string{}
	seen := map[[2]string]bool{}
	for _, af := range files {
		from := filepath.Base(fset.Position(af.Pos()).Filename)
		ast.Inspect(af, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := info.Uses[id]
			if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
				return true
			}
			to := filepath.Base(fset.Position(obj.Pos()).Filename)
			if e := [2]string{from, to}; to != from && !seen[e] {
				seen[e] = true
				edges[from] = append(edges[from], to)
			}
			return true
		})
	}
	return edges
}

// fileCycle returns one circle of references ("a.go → b.go → a.go"), or
// "" when the files form layers.
func fileCycle(edges map[string][]string) string {
	var names []string
	for n := range edges {
		names = append(names, n)
		sort.Strings(edges[n])
	}
	sort.Strings(names)
	state := map[string]int{} // 0 unseen, 1 on the path, 2 done
	var path []string
	var visit func(n string) string
	visit = func(n string) string {
		state[n] = 1
		path = append(path, n)
		for _, m := range edges[n] {
			switch state[m] {
			case 1:
				i := len(path) - 1
				for path[i] != m {
					i--
				}
				return strings.Join(append(append([]string(nil), path[i:]...), m), " → ")
			case 0:
				if c := visit(m); c != "" {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = 2
		return ""
	}
	for _, n := range names {
		if state[n] == 0 {
			if c := visit(n); c != "" {
				return c
			}
		}
	}
	return ""
}
