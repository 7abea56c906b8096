package plan

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func samplePlan(t *testing.T) Plan {
	t.Helper()
	var a UpdateArgs
	require.NoError(t, json.Unmarshal([]byte(fullArgs), &a))
	a.Items[0].Details = "Looked at store.go and tool.go.\n\nThe registry sorts tools by name; descriptions are embedded."
	a.Items = append(a.Items, Item{
		ID: "i18n", Title: "幅の広い文字を正しく折り返す", Status: Pending, NextAction: "check 表示幅 with a supercalifragilisticexpialidocious-word-that-never-fits",
		Evidence: []string{"nvim --headless -c 'echo strdisplaywidth(\"幅\")' → 2"},
	})
	p, err := Normalize(a, &Plan{Version: 2}, t0.Add(90*60e9))
	require.NoError(t, err)
	return p
}

// golden renders the lines and then each highlight with the text it covers.
func golden(r RenderedPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- width %d --\n", r.Width)
	for _, l := range r.Lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("-- highlights --\n")
	for _, h := range r.Highlights {
		fmt.Fprintf(&b, "%d:%d-%d %s %q\n", h.Line, h.Start, h.End, h.Group, r.Lines[h.Line][h.Start:h.End])
	}
	return b.String()
}

func TestRenderGolden(t *testing.T) {
	p := samplePlan(t)
	tests := []struct {
		name  string
		p     *Plan
		width int
	}{
		{"empty_40", nil, 40},
		{"cleared_40", func() *Plan { c := ClearedPlan(3, t0); return &c }(), 40},
		{"full_60", &p, 60},
		{"full_32", &p, 32},
		{"full_below_min_5", &p, 5},
		{"full_min_16", &p, MinRenderWidth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := golden(Render(tc.p, tc.width))
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./plan -run TestRenderGolden -update to create it")
			assert.Equal(t, string(want), got)
		})
	}
}

func TestRenderShowsEveryFieldAndNeverTruncates(t *testing.T) {
	p := samplePlan(t)
	for _, width := range []int{16, 17, 20, 33, 47, 80, 200} {
		r := Render(&p, width)
		joined := strings.Join(strings.Fields(strings.Join(r.Lines, " ")), "")
		need := []string{fmt.Sprintf("Planv%d", p.Version), "1/5done", "2025-01-0101:30:00UTC", p.Reason}
		for _, it := range p.Items {
			need = append(need, it.ID, StatusGlyph(it.Status)+string(it.Status), it.Title, it.Details, it.NextAction)
			need = append(need, it.Dependencies...)
			need = append(need, it.Evidence...)
		}
		for _, s := range need {
			assert.Contains(t, joined, strings.Join(strings.Fields(s), ""), "width %d", width)
		}
		assert.NotContains(t, joined, "…")
		maxW := 0
		for i, l := range r.Lines {
			assert.LessOrEqual(t, DisplayWidth(l), width, "width %d line %d %q", width, i, l)
			assert.True(t, utf8.ValidString(l))
			assert.NotContains(t, l, "\n")
			maxW = max(maxW, DisplayWidth(l))
		}
		assert.Equal(t, maxW, r.Width)
		for _, h := range r.Highlights {
			require.Less(t, h.Line, len(r.Lines))
			line := r.Lines[h.Line]
			assert.True(t, h.Start >= 0 && h.Start < h.End && h.End <= len(line), "%+v in %q", h, line)
			assert.True(t, utf8.ValidString(line[h.Start:h.End]), "spans fall on character boundaries")
		}
	}
}

func TestRenderStatusHighlights(t *testing.T) {
	p := samplePlan(t)
	r := Render(&p, 60)
	groups := map[string]string{}
	for _, h := range r.Highlights {
		groups[r.Lines[h.Line][h.Start:h.End]] = h.Group
	}
	assert.Equal(t, GroupDone, groups["✓ done"])
	assert.Equal(t, GroupInProgress, groups["◐ in_progress"])
	assert.Equal(t, GroupPending, groups["○ pending"])
	assert.Equal(t, GroupBlocked, groups["■ blocked"])
	assert.Equal(t, GroupHeader, groups["Plan v3 · 1/5 done ·"])
}

func TestRenderIsPure(t *testing.T) {
	p := samplePlan(t)
	before := ResultJSON(p)
	a, b := Render(&p, 41), Render(&p, 41)
	assert.Equal(t, a, b)
	assert.Equal(t, before, ResultJSON(p), "rendering does not change the plan")
}

func TestDisplayWidth(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"○◐■✓", 4}, {"幅", 2}, {"한글", 4}, {"e\u0301", 1}, {"🙂", 2}, {"ｆｕｌｌ", 8}, {"a\u200bb", 2},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, DisplayWidth(tc.s), "%q", tc.s)
	}
}

// The compact form lists the header, the item in progress with its next
// action first, then blocked items, and says how many more there are.
func TestRenderCompact(t *testing.T) {
	p := &Plan{Version: 4, Items: []Item{
		{ID: "a", Title: "Done thing", Status: Done},
		{ID: "b", Title: "Blocked thing", Status: Blocked, NextAction: "ask"},
		{ID: "c", Title: "Current thing", Status: InProgress, NextAction: "patch c.go", Details: "long details"},
		{ID: "d", Title: "Later thing", Status: Pending},
	}}
	r := RenderCompact(p, 40)
	assert.Equal(t, []string{
		"Plan v4 · 1/4 done",
		"◐ c Current thing",
		"  next: patch c.go",
		"■ b Blocked thing",
		"+2 more · :FidoPlan shows all",
	}, r.Lines)
	assert.Equal(t, Render(nil, 40).Lines, RenderCompact(nil, 40).Lines, "no plan: the empty state")
}
