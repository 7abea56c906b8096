package files

import (
	"context"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
)

// ignoreFixture exercises nested .gitignore files with negations,
// directory-only and anchored patterns, `**`, character classes and the
// `lead/**` + `!lead/ok.txt` re-include that trips pruning walkers.
var ignoreFixture = map[string]string{
	".gitignore": strings.Join([]string{
		"*.log", "!keep.log", "build/", "/root-only.txt", "tmp*", "!tmp-keep/",
		"lead/**", "!lead/ok.txt", "a/**/z.txt", "[0-9]*.dat", "# comment", `\#hash.txt`, "docs/*.md", "!docs/README.md",
		"wl/*", "!wl/keep/", "sp\\ ", "",
	}, "\n"),
	"keep.log": "", "x.log": "", "sub/y.log": "", "sub/keep.log": "",
	"build/out.o": "", "sub/build/out.o": "", "sub/build.txt": "",
	"root-only.txt": "", "sub/root-only.txt": "",
	"tmpfile": "", "tmp-keep/a.txt": "", "tmpdir/a.txt": "",
	"lead/ok.txt": "", "lead/no.txt": "", "lead/deep/ok.txt": "",
	"a/z.txt": "", "a/b/c/z.txt": "", "a/b/y.txt": "",
	"1.dat": "", "x1.dat": "", "#hash.txt": "", "hash.txt": "",
	"docs/a.md": "", "docs/README.md": "", "docs/sub/b.md": "",
	"wl/a.txt": "", "wl/keep/b.txt": "", "wl/other/c.txt": "",
	"sp ": "", "sp": "",
	"pkg/.gitignore": "*.gen\n!important.gen\n/local/\nnested/**/*.tmp\n",
	"pkg/a.gen":      "", "pkg/important.gen": "", "pkg/sub/b.gen": "",
	"pkg/local/x.go": "", "pkg/sub/local/x.go": "",
	"pkg/nested/q/r.tmp": "", "pkg/nested/r.tmp": "", "pkg/r.tmp": "",
	"pkg/deeper/.gitignore": "!*.gen\n*.go\n",
	"pkg/deeper/c.gen":      "", "pkg/deeper/d.go": "", "pkg/deeper/e.txt": "",
	"CRLF/.gitignore": "*.bak\r\n!ok.bak\r\n",
	"CRLF/x.bak":      "", "CRLF/ok.bak": "",
	".hidden/file.txt": "", ".hidden/x.log": "",
	"src/main.go": "",
}

func TestIgnoreMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; the ground truth comes from git ls-files")
	}
	ws, _ := toolstest.Workspace(t, ignoreFixture)
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = ws.Root
	require.NoError(t, cmd.Run())
	cmd = exec.Command("git", "-c", "core.excludesFile=/dev/null", "ls-files", "--others", "--exclude-standard", "-z")
	cmd.Dir = ws.Root
	out, err := cmd.Output()
	require.NoError(t, err)
	want := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	sort.Strings(want)

	var mu sync.Mutex
	var got []string
	walkDir(context.Background(), ws.Sandbox, ws.Root, ".", walkOptions{HiddenDirs: true, HiddenFiles: true}, func(_ int, e walkEntry) bool {
		if !e.isDir() {
			mu.Lock()
			got = append(got, e.Rel)
			mu.Unlock()
		}
		return true
	})
	sort.Strings(got)
	assert.Equal(t, want, got)
	// The fixture must really exercise the rules: some files kept, some dropped.
	assert.Contains(t, got, "lead/ok.txt")
	assert.NotContains(t, got, "lead/no.txt")
	assert.Less(t, len(got), len(ignoreFixture))
}

func TestIgnoreChainForStartDirectory(t *testing.T) {
	ws, _ := toolstest.Workspace(t, ignoreFixture)
	tests := []struct {
		dir     string
		ignored bool
	}{
		{"pkg", false},
		{"pkg/local", true},
		{"build", true},
		{"sub/build", true},
		{"lead", false},
		{"lead/deep", true},
		{"wl/keep", false},
		{"wl/other", true},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			_, ignored := ignoreChainFor(ws.Sandbox, tt.dir)
			assert.Equal(t, tt.ignored, ignored)
		})
	}
}

func TestFixTrailingDoubleStar(t *testing.T) {
	assert.Equal(t, "lead/*\n!lead/ok.txt\n**\na/**/b\n", string(fixTrailingDoubleStar([]byte("lead/**\n!lead/ok.txt\n**\na/**/b\n"))))
	assert.Equal(t, "x/*\r\n", string(fixTrailingDoubleStar([]byte("x/**\r\n"))))
}
