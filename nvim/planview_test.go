package nvim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/plan"
)

func samplePlan() *plan.Plan {
	return &plan.Plan{
		Version:   3,
		UpdatedAt: "2026-01-02T03:04:05Z",
		Reason:    "split the parser work",
		Items: []plan.Item{
			{ID: "read-spec", Title: "Read the grammar spec", Status: plan.Done,
				Evidence: []string{"spec.md sections 2 to 4 read", "notes in scratch"}},
			{ID: "lexer", Title: "Write the lexer", Status: plan.InProgress,
				Details: "tokens for identifiers numbers and strings", Dependencies: []string{"read-spec"},
				NextAction: "add string escapes"},
			{ID: "parser", Title: "Write the parser", Status: plan.Blocked,
				Dependencies: []string{"lexer"}, NextAction: "wait for the lexer"},
			{ID: "tests", Title: "Golden tests for the parser", Status: plan.Pending,
				Dependencies: []string{"parser", "lexer"}, NextAction: "collect sample inputs"},
		},
	}
}

// fieldWords are the words of every item field the window must show.
func fieldWords(p *plan.Plan) []string {
	var words []string
	for _, it := range p.Items {
		words = append(words, it.ID, string(it.Status))
		words = append(words, strings.Fields(it.Title)...)
		words = append(words, strings.Fields(it.Details)...)
		words = append(words, strings.Fields(it.NextAction)...)
		for _, d := range it.Dependencies {
			words = append(words, strings.Trim(d, ","))
		}
		for _, e := range it.Evidence {
			words = append(words, strings.Fields(e)...)
		}
	}
	return words
}

func TestPlanView(t *testing.T) {
	p := samplePlan()
	tests := []struct {
		name        string
		dims        EditorDims
		wantOverlay bool
	}{
		{name: "wide editor: side float", dims: EditorDims{Columns: 160, Lines: 50, CmdHeight: 1}},
		{name: "narrow editor: overlay", dims: EditorDims{Columns: 40, Lines: 30, CmdHeight: 1}, wantOverlay: true},
		{name: "short editor: content scrolls", dims: EditorDims{Columns: 100, Lines: 16, CmdHeight: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanView(p, tt.dims, true, false, PlanOptions{})
			_, _, width, _, _ := PlanLayout(tt.dims, 1, PlanOptions{})
			r := plan.Render(p, width)
			require.NotEmpty(t, got.Lines)
			assert.Equal(t, r.Lines, got.Lines, "rendered by plan.Render at the float's width")
			row, col, w, h, overlay := PlanLayout(tt.dims, len(r.Lines), PlanOptions{})
			assert.Equal(t, []int{row, col, w, h}, []int{got.Row, got.Col, got.Width, got.Height})
			assert.Equal(t, tt.wantOverlay, got.Overlay)
			assert.Equal(t, overlay, got.Overlay)
			assert.True(t, got.Visible)
			assert.False(t, got.Focus)

			for i, line := range got.Lines {
				assert.LessOrEqual(t, plan.DisplayWidth(line), got.Width, "line %d %q fits the float", i, line)
			}
			text := " " + strings.Join(got.Lines, " ") + " "
			for _, word := range fieldWords(p) {
				assert.Contains(t, text, word, "every field of every item is shown")
			}
			assert.Contains(t, text, "v3")
			assert.Contains(t, text, "1/4 done")

			require.Len(t, got.Highlights, len(r.Highlights))
			groups := map[string]bool{}
			for i, h := range got.Highlights {
				src := r.Highlights[i]
				assert.Equal(t, Highlight{Line: src.Line, ColStart: src.Start, ColEnd: src.End, Group: src.Group}, h)
				require.Less(t, h.Line, len(got.Lines))
				assert.LessOrEqual(t, h.ColEnd, len(got.Lines[h.Line]))
				groups[h.Group] = true
			}
			for _, g := range []string{"FidoPlanPending", "FidoPlanInProgress", "FidoPlanBlocked", "FidoPlanDone"} {
				assert.True(t, groups[g], "highlight group %s used", g)
			}
		})
	}
}

func TestPlanViewEmptyAndFocus(t *testing.T) {
	dims := EditorDims{Columns: 120, Lines: 40, CmdHeight: 1}
	for _, p := range []*plan.Plan{nil, {Version: 4}} {
		got := PlanView(p, dims, true, true, PlanOptions{})
		assert.NotEmpty(t, got.Lines)
		assert.Contains(t, strings.Join(got.Lines, " "), "No plan yet")
		assert.True(t, got.Focus)
		assert.NotNil(t, got.Highlights, "a list for Lua, never nil")
	}
	hidden := PlanView(samplePlan(), dims, false, true, PlanOptions{})
	assert.False(t, hidden.Visible)
	assert.False(t, hidden.Focus, "a hidden window cannot take focus")
}
