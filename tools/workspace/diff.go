package workspace

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/tools"
)

// Hunk is one change between two line sequences: a[A0:A1] became b[B0:B1]
// (zero-based, end exclusive; an empty range is an insertion or deletion
// point).
type Hunk struct{ A0, A1, B0, B1 int }

// maxDiffCost bounds the edit distance DiffLines searches exactly; beyond it
// the differing middle becomes one hunk (still correct, only coarser).
const maxDiffCost = 2000

// SplitLines splits text into lines, each keeping its line end, so joining
// them gives the text back byte for byte.
func SplitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// DiffLines returns the hunks that turn a into b, in order (Myers' O(ND)
// algorithm after trimming the common prefix and suffix).
func DiffLines(a, b []string) []Hunk {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	A, B := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(A) == 0 && len(B) == 0 {
		return nil
	}
	whole := []Hunk{{pre, pre + len(A), pre, pre + len(B)}}
	if len(A) == 0 || len(B) == 0 {
		return whole
	}
	delA, insB, ok := myers(A, B)
	if !ok {
		return whole
	}
	var hunks []Hunk
	i, j := 0, 0
	for i < len(A) || j < len(B) {
		if i < len(A) && j < len(B) && !delA[i] && !insB[j] {
			i, j = i+1, j+1
			continue
		}
		h := Hunk{A0: pre + i, B0: pre + j}
		for moved := true; moved; {
			moved = false
			for i < len(A) && delA[i] {
				i, moved = i+1, true
			}
			for j < len(B) && insB[j] {
				j, moved = j+1, true
			}
		}
		h.A1, h.B1 = pre+i, pre+j
		hunks = append(hunks, h)
	}
	return hunks
}

// myers marks the lines of a deleted and of b inserted by a shortest edit
// script; ok is false when the script costs more than maxDiffCost.
func myers(a, b []string) (delA, insB []bool, ok bool) {
	n, m := len(a), len(b)
	maxD := n + m
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int // trace[d][k+d] = furthest x on diagonal k after d edits
	end := -1
	for d := 0; d <= maxD && end < 0; d++ {
		if d > maxDiffCost {
			return nil, nil, false
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				end = d
				break
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	delA, insB = make([]bool, n), make([]bool, m)
	x, y := n, m
	for d := end; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		sx := px // where the single edit lands, before the diagonal
		if pk == k-1 {
			sx = px + 1
		}
		for x > sx {
			x, y = x-1, y-1
		}
		if pk == k+1 {
			insB[py] = true
		} else {
			delA[px] = true
		}
		x, y = px, py
	}
	return delA, insB, true
}

// maxPreviewLines bounds a rendered change: the rest is summarized.
const maxPreviewLines = 4000

// UnifiedDiff renders file changes as one unified diff (git-style headers:
// "new file", "deleted file"), with 3 lines of context. Beyond
// maxPreviewLines lines the remaining files are only named.
func UnifiedDiff(files []tools.FileChange) string {
	var b strings.Builder
	lines := 0
	for i, f := range files {
		if lines > maxPreviewLines {
			fmt.Fprintf(&b, "… and %d more file(s) not shown: ", len(files)-i)
			for j, g := range files[i:] {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(g.Path)
			}
			b.WriteString("\n")
			break
		}
		before, after := "a/"+f.Path, "b/"+f.Path
		fmt.Fprintf(&b, "diff --fido a/%s b/%s\n", f.Path, f.Path)
		switch {
		case !f.Existed:
			before = "/dev/null"
			b.WriteString("new file\n")
		case !f.Exists:
			after = "/dev/null"
			b.WriteString("deleted file\n")
		}
		if f.Note != "" {
			fmt.Fprintf(&b, "(%s)\n", f.Note)
			lines += 3
			continue
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", before, after)
		n := writeHunks(&b, SplitLines(f.Before), SplitLines(f.After), 3)
		lines += n + 4
	}
	return b.String()
}

// writeHunks writes the @@ sections of a unified diff and returns the
// number of lines written.
func writeHunks(w *strings.Builder, a, b []string, ctx int) int {
	hunks := DiffLines(a, b)
	written := 0
	line := func(prefix, s string) {
		w.WriteString(prefix)
		w.WriteString(strings.TrimRight(s, "\r\n"))
		w.WriteByte('\n')
		if !strings.HasSuffix(s, "\n") {
			w.WriteString("\\ No newline at end of file\n")
		}
		written++
	}
	for i := 0; i < len(hunks); {
		// Group hunks whose context would overlap.
		j := i
		for j+1 < len(hunks) && hunks[j+1].A0-hunks[j].A1 <= 2*ctx {
			j++
		}
		a0, a1 := max(hunks[i].A0-ctx, 0), min(hunks[j].A1+ctx, len(a))
		b0, b1 := max(hunks[i].B0-ctx, 0), min(hunks[j].B1+ctx, len(b))
		fmt.Fprintf(w, "@@ -%s +%s @@\n", rangeText(a0, a1), rangeText(b0, b1))
		written++
		pa := a0
		for _, h := range hunks[i : j+1] {
			for ; pa < h.A0; pa++ {
				line(" ", a[pa])
			}
			for _, s := range a[h.A0:h.A1] {
				line("-", s)
			}
			for _, s := range b[h.B0:h.B1] {
				line("+", s)
			}
			pa = h.A1
		}
		for ; pa < a1; pa++ {
			line(" ", a[pa])
		}
		i = j + 1
	}
	return written
}

// rangeText is a unified diff range: "start,count" (1-based; start is the
// line before an empty range).
func rangeText(from, to int) string {
	if to == from {
		return fmt.Sprintf("%d,0", from)
	}
	if to-from == 1 {
		return fmt.Sprintf("%d", from+1)
	}
	return fmt.Sprintf("%d,%d", from+1, to-from)
}
