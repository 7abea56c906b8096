package nvim

import "math"

// EditorDims is the editor's size as Lua reports it (on start and on
// VimResized): {columns, lines, cmdheight}.
type EditorDims struct {
	Columns   int `msgpack:"columns"`
	Lines     int `msgpack:"lines"`
	CmdHeight int `msgpack:"cmdheight"`
}

// PlanOptions configure the plan float's geometry. Zero values mean the
// defaults (see withDefaults).
type PlanOptions struct {
	// MinWidth: below this many editor columns the float becomes a
	// full-width overlay.
	MinWidth int
	// Width is the float's share of the editor columns.
	Width float64
	// MaxWidth caps the float's width in wide editors.
	MaxWidth int
}

const (
	defaultPlanMinWidth = 60
	defaultPlanShare    = 0.35
	defaultPlanMaxWidth = 80
	// planMinFloatWidth is the narrowest side float before the share rule
	// makes the plan unreadable.
	planMinFloatWidth = 30
	// planRow leaves the first screen row (a tabline, if shown) free.
	planRow = 1
	// planBorder is the rows (and columns) a rounded border adds.
	planBorder = 2
	// planBottomMargin keeps the last transcript lines (the live tail)
	// and the input window below the float.
	planBottomMargin = 4
)

func (o PlanOptions) withDefaults() PlanOptions {
	if o.MinWidth <= 0 {
		o.MinWidth = defaultPlanMinWidth
	}
	if o.Width <= 0 || o.Width > 1 {
		o.Width = defaultPlanShare
	}
	if o.MaxWidth <= 0 {
		o.MaxWidth = defaultPlanMaxWidth
	}
	return o
}

// PlanLayout computes the plan float's geometry: editor-relative, anchored
// NE at the right edge (col = columns), below the first row. The returned
// width and height are the inner size (the rounded border adds two of
// each). The height is the content height capped at half the editor and at
// what is left above the command line, statusline and a margin, so the
// float never covers the sidebar's input window or the transcript's live
// tail; taller content scrolls inside the float. Editors narrower than
// opts.MinWidth get a full-width overlay.
func PlanLayout(dims EditorDims, contentLines int, opts PlanOptions) (row, col, width, height int, overlay bool) {
	opts = opts.withDefaults()
	cols := max(dims.Columns, 1)
	row = planRow
	col = cols
	widest := max(cols-planBorder, 1)

	if cols < opts.MinWidth {
		overlay = true
		width = widest
	} else {
		width = int(math.Round(opts.Width * float64(cols)))
		width = max(width, planMinFloatWidth)
		width = min(width, max(opts.MaxWidth, planMinFloatWidth))
		width = min(width, widest)
	}

	// Rows left for the float's inner height: below `row`, above the
	// command line, the statusline and the bottom margin, minus the border.
	avail := dims.Lines - dims.CmdHeight - 1 - planBottomMargin - row - planBorder
	limit := min(avail, dims.Lines/2)
	height = min(max(contentLines, 1), limit)
	height = max(height, 1)
	return row, col, width, height, overlay
}

// sidebarRows estimates the transcript window's height in the default
// layout: the editor's lines without the command line, the transcript's
// statusline, the input window (3 lines) and its statusline.
func sidebarRows(dims EditorDims) int {
	return dims.Lines - max(dims.CmdHeight, 0) - 1 - 3 - 1
}

// CompactPlanHeight is the compact plan float's inner height: its content,
// capped so that the float with its border covers at most a third of the
// transcript's rows (at least the header and the item in progress, 3 rows).
func CompactPlanHeight(dims EditorDims, contentLines int) int {
	limit := max(sidebarRows(dims)/3-planBorder, 3)
	return max(min(contentLines, limit), 1)
}
