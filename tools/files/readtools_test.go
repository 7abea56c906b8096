package files

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
)

var readFixture = map[string]string{
	".gitignore":        "*.log\nvendor/\n",
	"README.md":         "# Title\nhello world\n",
	".env":              "SECRET=1\n",
	"src/main.go":       "package main\n\nfunc main() {\n\tParse(\"x\")\n}\n",
	"src/parse.go":      "package main\n\n// Parse parses.\nfunc Parse(s string) error {\n\treturn nil\n}\n",
	"src/parse_test.go": "package main\n\nfunc TestParse(t *testing.T) { Parse(\"\") }\n",
	"src/sub/deep.go":   "package sub\n// PARSE in caps\n",
	"src/app.log":       "func Parse in a log\n",
	"vendor/lib.go":     "func Parse vendored\n",
	".github/ci.yml":    "run: Parse\n",
	"bin/tool.bin":      "func Parse\x00binary",
	"crlf.txt":          "one\r\ntwo\r\nthree\r\n",
	"empty.txt":         "",
}

func TestListFiles(t *testing.T) {
	ws, _ := toolstest.Workspace(t, readFixture)
	require.NoError(t, os.Symlink("src/main.go", filepath.Join(ws.Root, "main-link")))
	tests := []struct {
		name    string
		args    any
		want    []string // exact lines of the listing, before any marker line
		more    string
		summary string
	}{
		{"root", map[string]any{"path": "."},
			[]string{".env", ".gitignore", "README.md", "bin/", "crlf.txt", "empty.txt", "main-link -> src/main.go", "src/"}, "", "8 entries"},
		{"root hidden", map[string]any{"path": "", "include_hidden": true},
			[]string{".env", ".github/", ".gitignore", "README.md", "bin/", "crlf.txt", "empty.txt", "main-link -> src/main.go", "src/"}, "", "9 entries"},
		{"recursive", map[string]any{"path": "src", "recursive": true},
			[]string{"src/main.go", "src/parse.go", "src/parse_test.go", "src/sub/", "src/sub/deep.go"}, "", "5 entries"},
		{"page 1", map[string]any{"path": "src", "recursive": true, "limit": 2},
			[]string{"src/main.go", "src/parse.go"}, "offset=2", "2 of 5 entries"},
		{"page 2", map[string]any{"path": "src", "recursive": true, "limit": 2, "offset": 2},
			[]string{"src/parse_test.go", "src/sub/"}, "offset=4", "2 of 5 entries"},
		{"last page", map[string]any{"path": "src/", "recursive": true, "limit": 2, "offset": 4},
			[]string{"src/sub/deep.go"}, "", "1 of 5 entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, ws, "list_files", tt.args)
			require.False(t, res.IsError, res.Content)
			lines := strings.Split(strings.TrimSpace(res.Content), "\n")
			var entries []string
			marker := ""
			for _, l := range lines {
				if strings.HasPrefix(l, "[more") {
					marker = l
					continue
				}
				entries = append(entries, l)
			}
			assert.Equal(t, tt.want, entries)
			if tt.more != "" {
				assert.Contains(t, marker, tt.more)
			} else {
				assert.Empty(t, marker)
			}
			assert.Equal(t, tt.summary, res.Summary)
		})
	}
}

func TestListFilesIgnoredDirectory(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{
		".gitignore": "build/\n", "build/out.o": "", "build/.gitignore": "!keep.txt\n", "build/keep.txt": "",
		"src/a.go": "",
	})
	for _, path := range []string{"build", "build/"} {
		res := run(t, ws, "list_files", map[string]any{"path": path, "recursive": true})
		require.False(t, res.IsError, res.Content)
		assert.NotContains(t, res.Content, "keep.txt", "git lists nothing below an ignored directory")
		assert.Contains(t, res.Content, "build/ is ignored by .gitignore")
		assert.Equal(t, "0 entries (ignored directory)", res.Summary)
	}
}

// backdate sets the modification time of every directory and file below
// root an hour back, as if the tree had been written long before: a
// listing made now may be kept (one made of a tree that changed within
// listingClockSlack is not), and any later change shows in a stamp.
func backdate(t *testing.T, root string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	require.NoError(t, filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, past, past)
	}))
}

func TestListFilesPagesFromOneWalk(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("d%d/f%02d.txt", i%5, i)] = ""
	}
	ws, _ := toolstest.Workspace(t, files)
	backdate(t, ws.Root) // a tree written just now is not trusted to be kept
	page := func(offset int) tools.Result {
		res := run(t, ws, "list_files", map[string]any{"path": ".", "recursive": true, "limit": 10, "offset": offset})
		require.False(t, res.IsError, res.Content)
		return res
	}
	before := listingWalks.Load()
	var seen []string
	for off := 0; off < 55; off += 10 {
		for _, l := range strings.Split(strings.TrimSpace(page(off).Content), "\n") {
			if !strings.HasPrefix(l, "[") {
				seen = append(seen, l)
			}
		}
	}
	assert.Len(t, seen, 55, "50 files and 5 directories, each once")
	assert.Equal(t, int64(1), listingWalks.Load()-before, "six pages, one walk")

	// A change to the tree is seen by the next page.
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, "d0", "aaa-new.txt"), nil, 0o644))
	res := page(10)
	assert.Equal(t, int64(2), listingWalks.Load()-before, "the tree changed: walked again")
	assert.Contains(t, res.Summary, "of 56 entries")
	// So is a changed ignore file, even when no directory changed.
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, ".gitignore"), []byte("d1/\n"), 0o644))
	backdate(t, ws.Root)
	page(0)
	n := listingWalks.Load()
	page(10)
	assert.Equal(t, n, listingWalks.Load(), "unchanged since the first page: kept")
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root, ".gitignore"), []byte("d2/\n"), 0o644))
	res = page(10)
	assert.Equal(t, n+1, listingWalks.Load())
	assert.Contains(t, res.Content, "d1/")
	assert.NotContains(t, res.Content, "d2/")
	assert.Contains(t, res.Summary, "of 46 entries")
}

func TestFindFiles(t *testing.T) {
	ws, _ := toolstest.Workspace(t, readFixture)
	tests := []struct {
		name string
		args any
		want []string
	}{
		{"basename glob", map[string]any{"pattern": "*.go"}, []string{"src/main.go", "src/parse.go", "src/parse_test.go", "src/sub/deep.go"}},
		{"exact name", map[string]any{"pattern": "deep.go"}, []string{"src/sub/deep.go"}},
		{"directories too", map[string]any{"pattern": "su*"}, []string{"src/sub/"}},
		{"path glob", map[string]any{"pattern": "src/**/*.go", "path": "."}, []string{"src/main.go", "src/parse.go", "src/parse_test.go", "src/sub/deep.go"}},
		{"path relative to search dir", map[string]any{"pattern": "sub/*.go", "path": "src"}, []string{"src/sub/deep.go"}},
		{"braces", map[string]any{"pattern": "{main,deep}.go"}, []string{"src/main.go", "src/sub/deep.go"}},
		{"ignored never found", map[string]any{"pattern": "*.log"}, nil},
		{"dot pattern finds hidden", map[string]any{"pattern": ".env*"}, []string{".env"}},
		{"hidden dir by dot path", map[string]any{"pattern": ".github/*"}, []string{".github/ci.yml"}},
		{"limit", map[string]any{"pattern": "*.go", "limit": 1}, []string{"src/main.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, ws, "find_files", tt.args)
			require.False(t, res.IsError, res.Content)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(res.Content), "\n") {
				if !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "(") {
					got = append(got, l)
				}
			}
			assert.Equal(t, tt.want, got)
			if tt.want == nil {
				assert.Contains(t, res.Content, "no matches")
			}
		})
	}
	res := run(t, ws, "find_files", map[string]any{"pattern": "*.go", "limit": 1})
	assert.Contains(t, res.Content, "[more: 1 of 4 matches shown")
	assert.Equal(t, "1 of 4 matches", res.Summary)
}

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&long, "line %d\n", i+1)
	}
	files := map[string]string{"long.txt": long.String(), "nonl.txt": "a\nb", "wide.txt": strings.Repeat("é", 3000) + "\nshort\n",
		"widecrlf.txt": "x\r\n" + strings.Repeat("a", 5000) + "\r\n", "widelast.txt": strings.Repeat("a", 4500),
		"late-nul.txt": strings.Repeat("text line\n", 7704) + "x\x00y\n" + "more\n"}
	for k, v := range readFixture {
		files[k] = v
	}
	ws, _ := toolstest.Workspace(t, files)
	tests := []struct {
		name    string
		args    any
		header  string
		body    []string
		more    string
		summary string
	}{
		{"whole", map[string]any{"path": "src/main.go"}, "[src/main.go: lines 1-5 of 5]",
			[]string{"package main", "", "func main() {", "\tParse(\"x\")", "}"}, "", "5 lines"},
		{"seek and limit", map[string]any{"path": "long.txt", "seek": 10, "limit": 3}, "[long.txt: lines 11-13 of 30]",
			[]string{"line 11", "line 12", "line 13"}, "[more: 17 lines follow; call read_file with seek=13]", "3 of 30 lines"},
		{"tail", map[string]any{"path": "long.txt", "seek": 28}, "[long.txt: lines 29-30 of 30]",
			[]string{"line 29", "line 30"}, "", "2 of 30 lines"},
		{"no final newline", map[string]any{"path": "nonl.txt"}, "[nonl.txt: lines 1-2 of 2]", []string{"a", "b"}, "", "2 lines"},
		{"crlf", map[string]any{"path": "crlf.txt"}, "[crlf.txt: lines 1-3 of 3, CRLF line endings]", []string{"one", "two", "three"}, "", "3 lines"},
		{"ignored file still readable", map[string]any{"path": "src/app.log"}, "[src/app.log: lines 1-1 of 1]", []string{"func Parse in a log"}, "", "1 lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, ws, "read_file", tt.args)
			require.False(t, res.IsError, res.Content)
			lines := strings.Split(strings.TrimSuffix(res.Content, "\n"), "\n")
			assert.Equal(t, tt.header, lines[0])
			body := lines[1:]
			if tt.more != "" {
				assert.Equal(t, tt.more, body[len(body)-1])
				body = body[:len(body)-1]
			}
			assert.Equal(t, tt.body, body)
			assert.Equal(t, tt.summary, res.Summary)
		})
	}
	res := run(t, ws, "read_file", map[string]any{"path": "empty.txt"})
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content, "0 lines")

	res = run(t, ws, "read_file", map[string]any{"path": "wide.txt"})
	require.False(t, res.IsError, res.Content)
	first := strings.Split(res.Content, "\n")[1]
	assert.Contains(t, first, "[line cut: 6000 bytes]", "the line's text, without its \\n")
	assert.True(t, strings.HasPrefix(first, strings.Repeat("é", 2000)))
	assert.Contains(t, res.Content, "1 lines longer than 4000 bytes were cut")
	res = run(t, ws, "read_file", map[string]any{"path": "widecrlf.txt"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "[line cut: 5000 bytes]", "without its \\r\\n")
	res = run(t, ws, "read_file", map[string]any{"path": "widelast.txt"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "[line cut: 4500 bytes]", "a last line without ending")

	// A NUL byte far past the first 8 KiB still makes the file binary, as
	// for ripgrep and patch.
	require.Equal(t, 77041, strings.IndexByte(files["late-nul.txt"], 0))
	res = run(t, ws, "read_file", map[string]any{"path": "late-nul.txt"})
	require.True(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "binary file")
	res = run(t, ws, "ripgrep", map[string]any{"pattern": "more", "path": "late-nul.txt"})
	assert.Contains(t, res.Content, "1 binary")
}

func TestRipgrep(t *testing.T) {
	files := map[string]string{"long.go": "x := \"" + strings.Repeat("a", 500) + "\" // Parse\n"}
	for k, v := range readFixture {
		files[k] = v
	}
	ws, _ := toolstest.Workspace(t, files)
	tests := []struct {
		name string
		args any
		want []string // path:line prefixes, in order
	}{
		{"literal", map[string]any{"pattern": `Parse\(`},
			[]string{"src/main.go:4", "src/parse.go:4", "src/parse_test.go:3"}},
		{"regex", map[string]any{"pattern": `^func \w+\(`},
			[]string{"src/main.go:3", "src/parse.go:4", "src/parse_test.go:3"}},
		{"ignore case", map[string]any{"pattern": "PARSE", "ignore_case": true, "path": "src/sub"},
			[]string{"src/sub/deep.go:2"}},
		{"case sensitive by default", map[string]any{"pattern": "PARSE"},
			[]string{"src/sub/deep.go:2"}},
		{"glob", map[string]any{"pattern": "Parse", "glob": "*_test.go"}, []string{"src/parse_test.go:3"}},
		{"negated glob", map[string]any{"pattern": `Parse\(`, "glob": "!*_test.go"}, []string{"src/main.go:4", "src/parse.go:4"}},
		{"hidden included", map[string]any{"pattern": "run: Parse", "include_hidden": true}, []string{".github/ci.yml:1"}},
		{"hidden skipped", map[string]any{"pattern": "run: Parse"}, nil},
		{"single ignored file searched", map[string]any{"pattern": "Parse", "path": "src/app.log"}, []string{"src/app.log:1"}},
		{"alternation", map[string]any{"pattern": `(TestParse|func main)\(`}, []string{"src/main.go:3", "src/parse_test.go:3"}},
		{"no cross-line match", map[string]any{"pattern": `main\s+func`}, nil},
		{"dollar is line end", map[string]any{"pattern": `\{$`, "path": "src"}, []string{"src/main.go:3", "src/parse.go:4"}},
		{"long line capped", map[string]any{"pattern": "// Parse$"}, []string{"long.go:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, ws, "ripgrep", tt.args)
			require.False(t, res.IsError, res.Content)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(res.Content), "\n") {
				if strings.HasPrefix(l, "[") || strings.HasPrefix(l, "(") {
					continue
				}
				parts := strings.SplitN(l, ":", 3)
				require.Len(t, parts, 3, l)
				got = append(got, parts[0]+":"+parts[1])
			}
			assert.Equal(t, tt.want, got)
		})
	}
	res := run(t, ws, "ripgrep", map[string]any{"pattern": "Parse"})
	assert.Contains(t, res.Content, "[skipped files: 1 binary]")
	assert.NotContains(t, res.Content, "vendor/")
	assert.NotContains(t, res.Content, "app.log")
	for _, l := range strings.Split(res.Content, "\n") {
		if strings.HasPrefix(l, "long.go:1:") {
			assert.LessOrEqual(t, len(l), len("long.go:1:")+DefaultMaxLineLen+len("…"))
			assert.True(t, strings.HasSuffix(l, "…"))
		}
	}
	assert.Equal(t, "5 matches in 4 files", res.Summary)

	res = run(t, ws, "ripgrep", map[string]any{"pattern": "Parse", "limit": 2})
	assert.Contains(t, res.Content, "[more: only the first 2 matches are shown")
	assert.Equal(t, "2+ matches in", res.Summary[:len("2+ matches in")])
}

func TestSearchSkipsLargeFiles(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{
		"big.txt":   strings.Repeat("needle\n", (DefaultMaxSearchFileSize/7)+1),
		"exact.txt": "needle\n" + strings.Repeat("x", DefaultMaxSearchFileSize-7),
	})
	res, err := Search(t.Context(), ws, ".", SearchOptions{Pattern: "needle"})
	require.NoError(t, err)
	assert.Equal(t, 1, res.SkippedLarge)
	require.Len(t, res.Matches, 1, "a file of exactly 2 MiB is still searched")
	assert.Equal(t, "exact.txt", res.Matches[0].Path)
}
