package workspace

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

// applyHunks rebuilds b from a and the hunks.
func applyHunks(a, b []string, hs []Hunk) []string {
	var out []string
	pa := 0
	for _, h := range hs {
		out = append(out, a[pa:h.A0]...)
		out = append(out, b[h.B0:h.B1]...)
		pa = h.A1
	}
	return append(out, a[pa:]...)
}

// lcs is the length of the longest common subsequence (the reference).
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestDiffLinesRebuildsAndIsMinimal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 2000; n++ {
		a := make([]string, r.Intn(12))
		b := make([]string, r.Intn(12))
		for i := range a {
			a[i] = string(rune('a' + r.Intn(3)))
		}
		for i := range b {
			b[i] = string(rune('a' + r.Intn(3)))
		}
		hs := DiffLines(a, b)
		require.Equal(t, strings.Join(b, ""), strings.Join(applyHunks(a, b, hs), ""), "a=%v b=%v", a, b)
		changed := 0
		for i, h := range hs {
			changed += h.A1 - h.A0 + h.B1 - h.B0
			if i > 0 {
				require.Greater(t, h.A0, hs[i-1].A1, "hunks are separate and ordered")
			}
		}
		require.Equal(t, len(a)+len(b)-2*lcs(a, b), changed, "a=%v b=%v", a, b)
	}
}

func TestUnifiedDiff(t *testing.T) {
	got := UnifiedDiff([]tools.FileChange{
		{Path: "a.go", Existed: true, Exists: true, Before: []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"), After: []byte("1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n")},
		{Path: "new.txt", Exists: true, After: []byte("x")},
		{Path: "old.txt", Existed: true, Before: []byte("gone\n")},
	})
	assert.Equal(t, `diff --fido a/a.go b/a.go
--- a/a.go
+++ b/a.go
@@ -1,5 +1,5 @@
 1
-2
+TWO
 3
 4
 5
@@ -8,3 +8,4 @@
 8
 9
 10
+11
diff --fido a/new.txt b/new.txt
new file
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+x
\ No newline at end of file
diff --fido a/old.txt b/old.txt
deleted file
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
`, got)
}
