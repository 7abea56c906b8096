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

// planSurface is the plan float and status().plan: the plan, whether the
// window is (to be) shown, the editor size it is laid out for, and what
// the next batch must carry. Not safe for concurrent use (UI guards it).
type planSurface struct {
	plan    *plan.Plan
	hidden  bool // the user closed the window: no auto-show until show
	shown   bool // show made it visible even without items
	focus   bool // the next payload focuses the window
	dims    EditorDims
	options PlanOptions

	viewDirty  bool // the float needs a new payload
	stateDirty bool // status().plan changed
}

// configure sets what Lua reported at the handshake.
func (p *planSurface) configure(dims EditorDims, opts PlanOptions, autoShow bool) {
	p.dims, p.options = dims, opts
	if !autoShow {
		p.hidden = true
	}
}

func (p *planSurface) set(pl *plan.Plan) {
	p.plan = pl
	p.viewDirty, p.stateDirty = true, true
}

// show makes the float visible (focused if asked) until the user closes it.
func (p *planSurface) show(focus bool) {
	p.hidden, p.shown, p.viewDirty = false, true, true
	p.focus = p.focus || focus
}

// closed records that the user closed the float.
func (p *planSurface) closed() {
	p.hidden, p.shown, p.focus, p.viewDirty = true, false, false, true
}

// toggle closes a visible float and shows a hidden one.
func (p *planSurface) toggle() {
	if p.visible() {
		p.closed()
	} else {
		p.show(false)
	}
}

func (p *planSurface) resized(d EditorDims) {
	if d != p.dims {
		p.dims = d
		p.viewDirty = true
	}
}

// visible reports whether the float is (to be) shown.
func (p *planSurface) visible() bool {
	if p.shown {
		return true
	}
	return !p.hidden && p.plan != nil && len(p.plan.Items) > 0
}

func (p *planSurface) dirty() bool { return p.viewDirty || p.stateDirty }

// take puts into b the float's payload (require("fido.planwin").apply) when
// the plan, its visibility, the focus request or the editor size changed,
// and status().plan when the plan changed.
func (p *planSurface) take(b *Batch) {
	if p.stateDirty {
		b.PlanState = &PlanState{Plan: p.plan}
		p.stateDirty = false
	}
	if p.viewDirty {
		v := PlanView(p.plan, p.dims, p.visible(), p.focus, p.options)
		b.Plan = &v
		p.focus, p.viewDirty = false, false
	}
}
