package lsp

import (
	"bytes"
	"hash/maphash"
)

// maxDiffCells bounds the line-matching table (old × new changed lines):
// beyond it the changed region counts as one block.
const maxDiffCells = 4 << 20

// lineMap relates the lines of a file before and after an edit. Unchanged
// lines map one to one; changed lines belong to a block (the run between two
// unchanged lines), numbered the same on both sides.
type lineMap struct {
	newOf    []int // old line (0-based) → new line, -1 when changed
	oldBlock []int // old line → block id when changed
	newBlock []int // new line → block id when changed, -1 when unchanged
}

// newLineMap diffs the two texts line by line: common prefix and suffix,
// then a longest common subsequence of the rest (one block when too large).
func newLineMap(oldText, newText []byte) *lineMap {
	a, b := splitLines(oldText), splitLines(newText)
	m := &lineMap{newOf: make([]int, len(a)), oldBlock: make([]int, len(a)), newBlock: make([]int, len(b))}
	for i := range m.newOf {
		m.newOf[i] = -1
	}
	for j := range m.newBlock {
		m.newBlock[j] = -1
	}
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		m.newOf[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		m.newOf[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) > 0 && len(mb) > 0 && len(ma)*len(mb) <= maxDiffCells {
		for _, p := range lcs(ma, mb) {
			m.newOf[pre+p[0]] = pre + p[1]
		}
	}
	// Number the blocks: a block starts after each unchanged line.
	block, i, j := 0, 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && m.newOf[i] >= 0 && m.newOf[i] == j {
			i, j = i+1, j+1
			block++
			continue
		}
		if i < len(a) && m.newOf[i] < 0 {
			m.oldBlock[i] = block
			i++
			continue
		}
		if j < len(b) {
			m.newBlock[j] = block
			j++
			continue
		}
		i++ // unreachable for a consistent map; never loop forever
	}
	return m
}

// same reports whether old line oldLine and new line newLine (1-based) are
// the same place: the unchanged line it moved to, or both in the block the
// edit replaced.
func (m *lineMap) same(oldLine, newLine int) bool {
	i, j := oldLine-1, newLine-1
	if i < 0 || i >= len(m.newOf) {
		// Past the end (e.g. a diagnostic at EOF): compare the shifted line.
		return newLine-len(m.newBlock) == oldLine-len(m.newOf)
	}
	if m.newOf[i] >= 0 {
		return m.newOf[i] == j
	}
	return j >= 0 && j < len(m.newBlock) && m.newBlock[j] == m.oldBlock[i]
}

// splitLines splits text into lines without their line endings.
func splitLines(text []byte) [][]byte {
	if len(text) == 0 {
		return nil
	}
	lines := bytes.Split(text, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// lcs returns matched index pairs of a longest common subsequence of a and b.
func lcs(a, b [][]byte) [][2]int {
	seed := maphash.MakeSeed()
	ha, hb := make([]uint64, len(a)), make([]uint64, len(b))
	for i, l := range a {
		ha[i] = maphash.Bytes(seed, l)
	}
	for j, l := range b {
		hb[j] = maphash.Bytes(seed, l)
	}
	n, w := len(a), len(b)+1
	// t[i*w+j]: LCS length of a[i:] and b[j:].
	t := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if ha[i] == hb[j] && bytes.Equal(a[i], b[j]) {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else {
				t[i*w+j] = max(t[(i+1)*w+j], t[i*w+j+1])
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < n && j < len(b); {
		switch {
		case ha[i] == hb[j] && bytes.Equal(a[i], b[j]):
			out = append(out, [2]int{i, j})
			i, j = i+1, j+1
		case t[(i+1)*w+j] >= t[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return out
}
