package workspace

import (
	"fmt"
	"slices"
	"strings"
)

// Step is one version in a file's history: the lines a change left, and
// whether Fido made that change (its own tool calls, reviews and rewinds)
// or someone else did (the user, another program, another conversation).
type Step struct {
	Lines []string
	Fido  bool
}

// FidoHunk is a region of a file that Fido wrote and that still differs
// from what it replaced.
type FidoHunk struct {
	// Start and End are the region's lines in the latest version
	// (zero-based, end exclusive; Start == End is the point where Fido
	// deleted lines).
	Start, End int
	// Before is what the region held before Fido wrote it: the lines a
	// revert puts back.
	Before []string
	// Edited says someone else changed the region after Fido wrote it, so
	// its lines are no longer Fido's alone and it cannot be reverted
	// without losing their change.
	Edited bool
}

// TrackHunks follows Fido's changes through a file's history (the lines
// before, then each later version in order) and returns the regions of the
// last version that Fido wrote, in order. A change of someone else's that
// touches a region marks it Edited; one beside Fido's regions only moves
// them. A region whose lines are again what they were before Fido wrote
// them is left out: nothing of Fido's is left there.
func TrackHunks(before []string, steps []Step) []FidoHunk {
	var hunks []FidoHunk
	prev := before
	for _, st := range steps {
		hunks = advance(hunks, prev, st.Lines, st.Fido)
		prev = st.Lines
	}
	var out []FidoHunk
	for _, h := range hunks {
		now := prev[h.Start:h.End]
		switch {
		case slices.Equal(h.Before, now):
			// Put back as it was: not a change any more.
		case h.Edited:
			out = append(out, h)
		default:
			// Fido's changes merged into one region may have left equal
			// lines inside it: show them as the separate hunks they are.
			for _, d := range DiffLines(h.Before, now) {
				out = append(out, FidoHunk{Start: h.Start + d.B0, End: h.Start + d.B1, Before: slices.Clone(h.Before[d.A0:d.A1])})
			}
		}
	}
	return out
}

// advance carries Fido's regions (in lines of prev) over the change from
// prev to next, made by Fido or by someone else, and returns them in lines
// of next. The changes and regions that touch form groups (union-find; a
// group spans contiguous lines); a group with a region of Fido's, or made
// by Fido, becomes one region of next.
func advance(hunks []FidoHunk, prev, next []string, fido bool) []FidoHunk {
	changes := DiffLines(prev, next)
	if len(changes) == 0 {
		return hunks
	}
	nc := len(changes)
	parent := make([]int, nc+len(hunks)) // changes first, then regions
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	// Regions are sorted and disjoint: the ones a change can touch are a
	// run, found with a pointer that only moves forward.
	low := 0
	for ci, c := range changes {
		for low < len(hunks) && hunks[low].End < c.A0 {
			low++
		}
		for j := low; j < len(hunks) && hunks[j].Start <= c.A1; j++ {
			if touches(c, hunks[j], fido) {
				parent[find(nc+j)] = find(ci)
			}
		}
	}
	type group struct {
		lo, end, grow int
		changes       []int
		regions       []int
	}
	groups := map[int]*group{}
	var order []*group
	at := func(i, lo, end int) *group {
		g := groups[find(i)]
		if g == nil {
			g = &group{lo: lo, end: end}
			groups[find(i)] = g
			order = append(order, g)
		}
		g.lo, g.end = min(g.lo, lo), max(g.end, end)
		return g
	}
	for ci, c := range changes {
		g := at(ci, c.A0, c.A1)
		g.changes = append(g.changes, ci)
		g.grow += (c.B1 - c.B0) - (c.A1 - c.A0)
	}
	for j, h := range hunks {
		g := at(nc+j, h.Start, h.End)
		g.regions = append(g.regions, j)
	}
	slices.SortStableFunc(order, func(a, b *group) int {
		if a.lo != b.lo {
			return a.lo - b.lo
		}
		return a.end - b.end
	})
	prefix := make([]int, nc+1) // lines added by changes[:i]
	for i, c := range changes {
		prefix[i+1] = prefix[i] + (c.B1 - c.B0) - (c.A1 - c.A0)
	}
	var out []FidoHunk
	before := 0 // changes wholly before the group (A1 <= lo)
	for _, g := range order {
		if len(g.regions) == 0 && !fido {
			continue // someone else's change away from Fido's regions
		}
		for before < nc && changes[before].A1 <= g.lo {
			before++
		}
		shift := prefix[before]
		for _, ci := range g.changes {
			if ci < before { // an insertion at lo belongs to the group
				shift -= (changes[ci].B1 - changes[ci].B0) - (changes[ci].A1 - changes[ci].A0)
			}
		}
		h := FidoHunk{Start: g.lo + shift, End: g.end + shift + g.grow, Edited: !fido && len(g.changes) > 0}
		if len(g.changes) == 0 {
			h.Before, h.Edited = hunks[g.regions[0]].Before, hunks[g.regions[0]].Edited
			out = append(out, h)
			continue
		}
		pos := g.lo
		h.Before = []string{}
		for _, j := range g.regions {
			r := hunks[j]
			h.Before = append(h.Before, prev[pos:r.Start]...)
			h.Before = append(h.Before, r.Before...)
			h.Edited = h.Edited || r.Edited
			pos = r.End
		}
		h.Before = append(h.Before, prev[pos:g.end]...)
		out = append(out, h)
	}
	return out
}

// touches says whether the change c (a[c.A0:c.A1] replaced) and Fido's
// region h (lines of a) meet: they share a line, c inserts strictly inside
// h, c replaces lines around the point where h deleted, or both are at the
// same point. For Fido's own changes, being next to each other counts too,
// so consecutive edits of Fido's form one region.
func touches(c Hunk, h FidoHunk, fido bool) bool {
	cs, ce, hs, he := c.A0, c.A1, h.Start, h.End
	switch {
	case cs < ce && hs < he:
		if cs < he && hs < ce {
			return true
		}
	case cs == ce && hs < he:
		if hs < cs && cs < he {
			return true
		}
	case cs < ce && hs == he:
		if cs < hs && hs < ce {
			return true
		}
	default:
		if cs == hs {
			return true
		}
	}
	return fido && (ce == hs || he == cs)
}

// RevertHunks returns lines with the hunks whose index keep says false
// put back as they were before Fido (nil keep: all of them).
func RevertHunks(lines []string, hunks []FidoHunk, keep func(i int) bool) []string {
	var out []string
	at := 0
	for i, h := range hunks {
		if keep != nil && keep(i) {
			continue
		}
		out = append(out, lines[at:h.Start]...)
		out = append(out, h.Before...)
		at = h.End
	}
	return append(out, lines[at:]...)
}

// BeforeRange is where hunk i's Before lies in RevertHunks(lines, hunks, nil).
func BeforeRange(hunks []FidoHunk, i int) (from, to int) {
	shift := 0
	for _, h := range hunks[:i] {
		shift += len(h.Before) - (h.End - h.Start)
	}
	from = hunks[i].Start + shift
	return from, from + len(hunks[i].Before)
}

// LinesText words a hunk's place for the user: "line 3", "lines 3-5", or
// "the lines deleted after line 2" (one-based, in the latest version).
func LinesText(h FidoHunk) string {
	switch n := h.End - h.Start; {
	case n > 1:
		return fmt.Sprintf("lines %d-%d", h.Start+1, h.End)
	case n == 1:
		return fmt.Sprintf("line %d", h.Start+1)
	}
	return fmt.Sprintf("the lines deleted after line %d", h.Start)
}

// editedText words the hunks the user edited: "line 2 was", "lines 2-3 and
// line 9 were".
func editedText(hunks []FidoHunk) string {
	var parts []string
	lines := 0
	for _, h := range hunks {
		if h.Edited {
			parts = append(parts, LinesText(h))
			lines += max(h.End-h.Start, 1)
		}
	}
	text := strings.Join(parts, ", ")
	if i := strings.LastIndex(text, ", "); i >= 0 {
		text = text[:i] + " and " + text[i+2:]
	}
	if len(parts) == 1 && lines == 1 {
		return text + " was"
	}
	return text + " were"
}
