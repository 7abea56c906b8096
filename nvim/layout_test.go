package nvim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlanLayout(t *testing.T) {
	tests := []struct {
		name         string
		dims         EditorDims
		content      int
		opts         PlanOptions
		wantWidth    int
		wantHeight   int
		wantOverlay  bool
		wantRow      int
		wantColRight bool
	}{
		{name: "wide editor: share of the columns", dims: EditorDims{Columns: 200, Lines: 50, CmdHeight: 1},
			content: 10, wantWidth: 70, wantHeight: 10, wantRow: 1},
		{name: "very wide editor: capped at MaxWidth", dims: EditorDims{Columns: 400, Lines: 50, CmdHeight: 1},
			content: 10, wantWidth: 80, wantHeight: 10, wantRow: 1},
		{name: "custom MaxWidth", dims: EditorDims{Columns: 400, Lines: 50, CmdHeight: 1},
			content: 10, opts: PlanOptions{MaxWidth: 120}, wantWidth: 120, wantHeight: 10, wantRow: 1},
		{name: "medium editor: at least 30 columns", dims: EditorDims{Columns: 70, Lines: 40, CmdHeight: 1},
			content: 3, wantWidth: 30, wantHeight: 3, wantRow: 1},
		{name: "custom share", dims: EditorDims{Columns: 200, Lines: 50, CmdHeight: 1},
			content: 3, opts: PlanOptions{Width: 0.2}, wantWidth: 40, wantHeight: 3, wantRow: 1},
		{name: "tall content capped at half the editor", dims: EditorDims{Columns: 200, Lines: 50, CmdHeight: 1},
			content: 500, wantWidth: 70, wantHeight: 25, wantRow: 1},
		{name: "tall content in a short editor stays above cmdline, statusline and margin",
			dims: EditorDims{Columns: 200, Lines: 20, CmdHeight: 3}, content: 500,
			// 20 - 3 cmdheight - 1 statusline - 4 margin - 1 row - 2 border = 9
			wantWidth: 70, wantHeight: 9, wantRow: 1},
		{name: "narrow editor: full-width overlay", dims: EditorDims{Columns: 50, Lines: 40, CmdHeight: 1},
			content: 12, wantWidth: 48, wantHeight: 12, wantOverlay: true, wantRow: 1},
		{name: "custom MinWidth makes 70 columns an overlay", dims: EditorDims{Columns: 70, Lines: 40, CmdHeight: 1},
			content: 4, opts: PlanOptions{MinWidth: 100}, wantWidth: 68, wantHeight: 4, wantOverlay: true, wantRow: 1},
		{name: "tiny editor: still at least one cell", dims: EditorDims{Columns: 3, Lines: 4, CmdHeight: 1},
			content: 10, wantWidth: 1, wantHeight: 1, wantOverlay: true, wantRow: 1},
		{name: "zero dims (before the first resize report)", dims: EditorDims{},
			content: 0, wantWidth: 1, wantHeight: 1, wantOverlay: true, wantRow: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row, col, width, height, overlay := PlanLayout(tt.dims, tt.content, tt.opts)
			assert.Equal(t, tt.wantRow, row, "row")
			assert.Equal(t, max(tt.dims.Columns, 1), col, "col is the right edge")
			assert.Equal(t, tt.wantWidth, width, "width")
			assert.Equal(t, tt.wantHeight, height, "height")
			assert.Equal(t, tt.wantOverlay, overlay, "overlay")
			if tt.dims.Columns > 2 {
				assert.LessOrEqual(t, width+2, tt.dims.Columns, "the bordered float fits the editor")
			}
		})
	}
}

// The float (with its border) never reaches the rows of the input window at
// the bottom of the sidebar, whatever the content height.
func TestPlanLayoutLeavesTheBottomFree(t *testing.T) {
	for lines := 12; lines <= 80; lines++ {
		for _, cmdh := range []int{0, 1, 2} {
			dims := EditorDims{Columns: 120, Lines: lines, CmdHeight: cmdh}
			row, _, _, height, _ := PlanLayout(dims, 1000, PlanOptions{})
			bottom := row + height + 2 // last row covered, exclusive
			assert.LessOrEqual(t, bottom, lines-cmdh-1-planBottomMargin, "lines=%d cmdheight=%d", lines, cmdh)
			assert.LessOrEqual(t, height, lines/2, "lines=%d", lines)
		}
	}
}

// The compact plan float with its border covers at most a third of the
// default layout's transcript rows, whatever the content's height.
func TestCompactPlanHeightLeavesTwoThirds(t *testing.T) {
	for _, d := range []EditorDims{{200, 50, 1}, {120, 40, 1}, {90, 30, 1}, {80, 24, 2}} {
		rows := sidebarRows(d)
		h := CompactPlanHeight(d, 100)
		assert.GreaterOrEqual(t, 3*(rows-(h+2)), 2*rows, "%v: %d of %d rows", d, h+2, rows)
		assert.GreaterOrEqual(t, h, 3, "room for the header and the item in progress")
		assert.Equal(t, 2, CompactPlanHeight(d, 2), "short content keeps its height")
	}
}
