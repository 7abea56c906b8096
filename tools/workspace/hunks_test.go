package workspace

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ls splits "a b c" into lines (each with its "\n"); "" is no line.
func ls(s string) []string {
	if s == "" {
		return nil
	}
	f := strings.Fields(s)
	for i := range f {
		f[i] += "\n"
	}
	return f
}

func fido(s string) Step { return Step{Lines: ls(s), Fido: true} }
func user(s string) Step { return Step{Lines: ls(s)} }

// hk is a FidoHunk in the words of the table: start, end, before lines.
func hk(start, end int, before string, edited bool) FidoHunk {
	b := ls(before)
	if b == nil {
		b = []string{}
	}
	return FidoHunk{Start: start, End: end, Before: b, Edited: edited}
}

func TestTrackHunks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before string
		steps  []Step
		want   []FidoHunk
	}{
		{"one change of Fido's", "1 2 3 4 5", []Step{fido("1 2 X 4 5")}, []FidoHunk{hk(2, 3, "3", false)}},
		{"two hunks, then the user edits a line between them", "1 2 3 4 5 6 7",
			[]Step{fido("1 A 3 4 5 B 7"), user("1 A 3 U 5 B 7")},
			[]FidoHunk{hk(1, 2, "2", false), hk(5, 6, "6", false)}},
		{"the user inserts and deletes lines before and between: Fido's move", "1 2 3 4 5 6 7",
			[]Step{fido("1 A 3 4 5 B 7"), user("top 1 A 3 5 new new B 7")},
			[]FidoHunk{hk(2, 3, "2", false), hk(7, 8, "6", false)}},
		{"the user edits inside Fido's hunk", "1 2 3 4 5",
			[]Step{fido("1 A B 4 5"), user("1 A U 4 5")},
			[]FidoHunk{hk(1, 3, "2 3", true)}},
		{"the user inserts inside Fido's hunk", "1 2 3 4 5",
			[]Step{fido("1 A B 4 5"), user("1 A U B 4 5")},
			[]FidoHunk{hk(1, 4, "2 3", true)}},
		{"the user inserts right after Fido's hunk: not Fido's, not an edit of it", "1 2 3 4",
			[]Step{fido("1 A 3 4"), user("1 A U 3 4")},
			[]FidoHunk{hk(1, 2, "2", false)}},
		{"the user edits the line right after Fido's hunk", "1 2 3 4",
			[]Step{fido("1 A 3 4"), user("1 A U 4")},
			[]FidoHunk{hk(1, 2, "2", false)}},
		{"the user puts Fido's line back as it was: nothing left", "1 2 3",
			[]Step{fido("1 A 3"), user("1 2 3")}, nil},
		{"Fido deletes lines; the user edits beside the point", "1 2 3 4 5",
			[]Step{fido("1 4 5"), user("U 4 5")},
			[]FidoHunk{hk(1, 1, "2 3", false)}},
		{"Fido deletes lines; the user inserts at that very point", "1 2 3 4 5",
			[]Step{fido("1 4 5"), user("1 U 4 5")},
			[]FidoHunk{hk(1, 2, "2 3", true)}},
		{"two changes of Fido's next to each other form one region, shown as its hunks", "1 2 3 4 5",
			[]Step{fido("1 A 3 4 5"), fido("1 A B 4 5")},
			[]FidoHunk{hk(1, 3, "2 3", false)}},
		{"Fido changes its own line again", "1 2 3",
			[]Step{fido("1 A 3"), fido("1 B 3")},
			[]FidoHunk{hk(1, 2, "2", false)}},
		{"a revert of Fido's (a review) puts a hunk back: it is gone", "1 2 3 4 5",
			[]Step{fido("1 A 3 B 5"), user("1 A U B 5"), fido("1 2 U B 5")},
			[]FidoHunk{hk(3, 4, "4", false)}},
		{"a user edit between two turns' changes stays the user's", "1 2 3 4 5",
			[]Step{fido("1 A 3 4 5"), user("1 A U 4 5"), fido("1 A U 4 B")},
			[]FidoHunk{hk(1, 2, "2", false), hk(4, 5, "5", false)}},
		{"Fido rewrites a region the user had edited: still marked edited", "1 2 3",
			[]Step{fido("1 A 3"), user("1 AU 3"), fido("1 B 3")},
			[]FidoHunk{hk(1, 2, "2", true)}},
		{"a file Fido created", "", []Step{fido("a b")}, []FidoHunk{hk(0, 2, "", false)}},
		{"a file Fido created, the user appends a line", "", []Step{fido("a b"), user("a b c")}, []FidoHunk{hk(0, 2, "", false)}},
		{"a file Fido emptied (rm)", "a b", []Step{fido("")}, []FidoHunk{hk(0, 0, "a b", false)}},
		{"Fido merges two regions the user separated", "1 2 3 4 5",
			[]Step{fido("1 A 3 B 5"), fido("1 C 5")},
			[]FidoHunk{hk(1, 2, "2 3 4", false)}},
		{"the user replaces a line spanning two of Fido's hunks", "1 2 3 4 5",
			[]Step{fido("1 A 3 B 5"), user("1 U 5")},
			[]FidoHunk{hk(1, 2, "2 3 4", true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TrackHunks(ls(tc.before), tc.steps)
			assert.Equal(t, tc.want, got)
			last := ls(tc.before)
			if len(tc.steps) > 0 {
				last = tc.steps[len(tc.steps)-1].Lines
			}
			for _, h := range got {
				assert.LessOrEqual(t, h.End, len(last))
			}
		})
	}
}

func TestRevertHunksAndRanges(t *testing.T) {
	final := ls("1 A 3 U 5 B")
	hunks := TrackHunks(ls("1 2 3 4 5 6"), []Step{fido("1 A 3 4 5 B"), user("1 A 3 U 5 B")})
	require.Len(t, hunks, 2)
	assert.Equal(t, ls("1 2 3 U 5 6"), RevertHunks(final, hunks, nil), "every hunk of Fido's, the user's line kept")
	assert.Equal(t, ls("1 2 3 U 5 B"), RevertHunks(final, hunks, func(i int) bool { return i == 1 }))
	from, to := BeforeRange(hunks, 1)
	assert.Equal(t, [2]int{5, 6}, [2]int{from, to})

	del := TrackHunks(ls("1 2 3 4"), []Step{fido("1 4")})
	from, to = BeforeRange(del, 0)
	assert.Equal(t, [2]int{1, 3}, [2]int{from, to})
	assert.Equal(t, "the lines deleted after line 1", LinesText(del[0]))
	assert.Equal(t, "line 2", LinesText(hunks[0]))
	assert.Equal(t, "lines 2-4", LinesText(FidoHunk{Start: 1, End: 4}))
	assert.Equal(t, "line 2 was", editedText([]FidoHunk{{Start: 1, End: 2, Edited: true}, {Start: 5, End: 6}}))
	assert.Equal(t, "line 2 and lines 6-7 were", editedText([]FidoHunk{{Start: 1, End: 2, Edited: true}, {Start: 5, End: 7, Edited: true}}))
}

// Random histories of unique lines: the base's lines "bN", Fido's "fN",
// the user's "uN". Whatever the history, a hunk that is not Edited holds
// only Fido's lines, reverting every such hunk removes them and keeps every
// line of the user's, and with no one else's change in between, reverting
// all hunks gives the base back.
func TestTrackHunksKeepsOthersLines(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	next := 0
	mutate := func(lines []string, tag string) []string {
		out := slices.Clone(lines)
		for n := r.Intn(3) + 1; n > 0; n-- {
			at := r.Intn(len(out) + 1)
			del := min(r.Intn(3), len(out)-at)
			var ins []string
			for k := r.Intn(3); k > 0; k-- {
				next++
				ins = append(ins, fmt.Sprintf("%s%d\n", tag, next))
			}
			out = slices.Concat(out[:at], ins, out[at+del:])
		}
		return out
	}
	for round := 0; round < 3000; round++ {
		base := make([]string, r.Intn(10))
		for i := range base {
			base[i] = fmt.Sprintf("b%d\n", i)
		}
		var steps []Step
		cur := base
		onlyFido := r.Intn(3) == 0
		for s := r.Intn(4) + 1; s > 0; s-- {
			isFido := onlyFido || r.Intn(2) == 0
			tag := "u"
			if isFido {
				tag = "f"
			}
			cur = mutate(cur, tag)
			steps = append(steps, Step{Lines: cur, Fido: isFido})
		}
		hunks := TrackHunks(base, steps)
		desc := fmt.Sprintf("round %d: base %q steps %v → %+v", round, base, steps, hunks)
		for i, h := range hunks {
			require.True(t, h.Start <= h.End && h.End <= len(cur), desc)
			if i > 0 {
				require.LessOrEqual(t, hunks[i-1].End, h.Start, desc)
			}
			if !h.Edited {
				for _, l := range cur[h.Start:h.End] {
					require.True(t, strings.HasPrefix(l, "f"), "a clean hunk holds only Fido's lines: %s", desc)
				}
			}
		}
		clean := RevertHunks(cur, hunks, func(i int) bool { return hunks[i].Edited })
		for _, l := range cur {
			if strings.HasPrefix(l, "u") {
				require.Contains(t, clean, l, "the user's line stays: %s", desc)
			}
		}
		inEdited := map[string]bool{}
		for _, h := range hunks {
			if h.Edited {
				for _, l := range cur[h.Start:h.End] {
					inEdited[l] = true
				}
			}
		}
		for _, l := range clean {
			if strings.HasPrefix(l, "f") {
				require.True(t, inEdited[l], "only Fido's lines in edited hunks are left: %s", desc)
			}
		}
		if onlyFido {
			for _, h := range hunks {
				require.False(t, h.Edited, desc)
			}
			require.Equal(t, base, append([]string{}, RevertHunks(cur, hunks, nil)...), desc)
		}
	}
}
