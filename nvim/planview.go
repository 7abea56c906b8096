package nvim

import "github.com/fido-nvim/fido/plan"

// Highlight colours bytes [ColStart, ColEnd) of Lines[Line] (0-based) with
// Group; Lua turns it into an extmark.
type Highlight struct {
	Line     int    `msgpack:"line"`
	ColStart int    `msgpack:"col_start"`
	ColEnd   int    `msgpack:"col_end"`
	Group    string `msgpack:"group"`
}

// PlanPayload is what Lua's require("fido.planwin").apply receives: the
// float's editor-relative geometry (anchor NE, Col = the editor's right edge,
// inner Width/Height) and its content. Lines and Highlights are never nil, so
// Lua always gets lists.
type PlanPayload struct {
	Visible    bool        `msgpack:"visible"`
	Focus      bool        `msgpack:"focus"`
	Overlay    bool        `msgpack:"overlay"`
	Row        int         `msgpack:"row"`
	Col        int         `msgpack:"col"`
	Width      int         `msgpack:"width"`
	Height     int         `msgpack:"height"`
	Lines      []string    `msgpack:"lines"`
	Highlights []Highlight `msgpack:"highlights"`
	// Compact is the form Lua shows while a turn runs and the float is not
	// focused (plan.RenderCompact), with its own height: it leaves at least
	// two thirds of the transcript uncovered.
	Compact *PlanForm `msgpack:"compact,omitempty"`
}

// PlanForm is an alternative content of the plan float.
type PlanForm struct {
	Height     int         `msgpack:"height"`
	Lines      []string    `msgpack:"lines"`
	Highlights []Highlight `msgpack:"highlights"`
}

func highlights(hs []plan.Highlight) []Highlight {
	out := make([]Highlight, len(hs))
	for i, h := range hs {
		out[i] = Highlight{Line: h.Line, ColStart: h.Start, ColEnd: h.End, Group: h.Group}
	}
	return out
}

// PlanView lays out the plan float for the editor and renders the plan (a
// nil or empty plan renders the empty-state line) at the float's width with
// plan.Render, so every item and every field is in Lines, wrapped. When the
// content is taller than the float, the float scrolls (Lua keeps the item in
// progress in view).
func PlanView(p *plan.Plan, dims EditorDims, visible, focus bool, opts PlanOptions) PlanPayload {
	_, _, width, _, _ := PlanLayout(dims, 1, opts)
	r := plan.Render(p, width)
	row, col, width, height, overlay := PlanLayout(dims, len(r.Lines), opts)
	out := PlanPayload{
		Visible: visible, Focus: visible && focus, Overlay: overlay,
		Row: row, Col: col, Width: width, Height: height,
		Lines:      append([]string{}, r.Lines...),
		Highlights: highlights(r.Highlights),
	}
	if p != nil && len(p.Items) > 0 {
		c := plan.RenderCompact(p, width)
		out.Compact = &PlanForm{
			Height:     CompactPlanHeight(dims, len(c.Lines)),
			Lines:      append([]string{}, c.Lines...),
			Highlights: highlights(c.Highlights),
		}
	}
	return out
}
