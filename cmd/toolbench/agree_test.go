package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/files"
	"github.com/fido-nvim/fido/tools/workspace"
)

// agreeQueries are the benchmark's queries this test runs: one of each
// class issue #9 names (make bench compares all of them, and their speed).
var agreeQueries = map[string]bool{
	"-i word": true, "many": true, `\d$`: true, `(2|3)$`: true, `\)$`: true, `^$`: true,
	`\berr\b`: true, `.{200,}`: true, `\p{Greek}`: true, `-i é`: true, `-i σ`: true,
	`glob !*_test.go`: true, `path+glob`: true,
}

// The benchmark's queries, one of each class, on a copy of Go's source tree
// (thousands of real files) with the benchmark's nested .gitignore rules,
// ignored node_modules, a hidden directory and binaries: the ripgrep tool
// returns exactly rg's lines, with the documented rules applied (a file
// with a NUL is binary; a line with invalid UTF-8 may differ). make test
// runs this with -race, so the workers' sharing is checked on a real tree.
func TestToolAgreesWithRgOnGoSource(t *testing.T) {
	rgBin, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("rg is not installed (CI is set; scripts/ensure-tools installs ripgrep)")
		}
		t.Skip("rg is not installed")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	root, err := ensureTree(t.TempDir(), strings.TrimSpace(string(out)), 1)
	require.NoError(t, err)
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	ran := 0
	for _, q := range queries {
		if !agreeQueries[q.name] {
			continue
		}
		ran++
		t.Run(q.name, func(t *testing.T) {
			cmd := exec.Command(rgBin, append([]string{"--no-config", "-n", "--null", "--max-filesize", "2M"}, q.rgArgs...)...)
			cmd.Dir = root
			rgOut, err := cmd.Output()
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
				t.Fatalf("rg: %v", err)
			}
			path := q.path
			if path == "" {
				path = "."
			}
			res, err := files.Search(t.Context(), ws, path, files.SearchOptions{Pattern: q.pattern, IgnoreCase: q.ignoreCase, Glob: q.glob})
			require.NoError(t, err)
			require.False(t, res.Truncated, "the default limit cut the result")
			want := applyRules(root, parseRg(rgOut))
			got := make(map[string]bool, len(res.Matches))
			for _, m := range res.Matches {
				got[fmt.Sprintf("%s:%d", m.Path, m.Line)] = true
			}
			if !equalSets(want, got) {
				assert.NotZero(t, invalidUTF8Only(root, want, got), "%s: %s", q.name, diffSets(want, got))
			}
		})
	}
	assert.Equal(t, len(agreeQueries), ran, "every chosen query is one of the benchmark's")
}
