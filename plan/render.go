package plan

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Highlight groups used by Render. The plugin links them with default = true.
const (
	GroupHeader     = "FidoPlanHeader"
	GroupMeta       = "FidoPlanMeta"
	GroupPending    = "FidoPlanPending"
	GroupInProgress = "FidoPlanInProgress"
	GroupBlocked    = "FidoPlanBlocked"
	GroupDone       = "FidoPlanDone"
)

// EmptyText is the line the plan window shows when there is no plan.
const EmptyText = "No plan yet. Fido creates one for multi-step work; :FidoPlan shows it."

// MinRenderWidth is the narrowest layout Render makes; a smaller width is
// treated as this one (lines are then wider than asked, but nothing is cut).
const MinRenderWidth = 16

// Highlight colours bytes [Start, End) of Lines[Line] (0-based), the units of
// nvim_buf_add_highlight.
type Highlight struct {
	Line  int
	Start int
	End   int
	Group string
}

// RenderedPlan is the plan window's content. Width is the widest line in
// display columns.
type RenderedPlan struct {
	Lines      []string
	Highlights []Highlight
	Width      int
}

// StatusGlyph is the one-column symbol shown before a status word.
func StatusGlyph(s Status) string {
	switch s {
	case InProgress:
		return "◐"
	case Blocked:
		return "■"
	case Done:
		return "✓"
	}
	return "○"
}

// StatusGroup is the highlight group of a status.
func StatusGroup(s Status) string {
	switch s {
	case InProgress:
		return GroupInProgress
	case Blocked:
		return GroupBlocked
	case Done:
		return GroupDone
	}
	return GroupPending
}

// Render lays out the whole plan for a window width display columns wide:
// a header (version, progress, update time), the reason, then every item with
// every field (status glyph and word, id, title, details, dependencies, next
// action, evidence). Long text wraps, words longer than a line are broken;
// nothing is truncated. A nil plan or one without items renders EmptyText.
// Render is pure: the same plan and width give the same lines.
func Render(p *Plan, width int) RenderedPlan {
	r, ok := startRender(p, width)
	if !ok {
		return r.out
	}
	done, total := p.Progress()
	r.para("", "",
		unit(fmt.Sprintf("Plan v%d", p.Version), GroupHeader),
		seg(fmt.Sprintf("· %d/%d done ·", done, total), GroupHeader),
		seg("updated "+displayTime(p.UpdatedAt), GroupMeta))
	if p.Reason != "" {
		r.para("", "", seg(p.Reason, GroupMeta))
	}
	for _, it := range p.Items {
		r.blank()
		group := StatusGroup(it.Status)
		r.para("", "  ", unit(StatusGlyph(it.Status)+" "+string(it.Status), group), seg(it.ID, GroupHeader))
		titleGroup := ""
		if it.Status == Done {
			titleGroup = GroupDone
		}
		r.para("  ", "  ", seg(it.Title, titleGroup))
		if it.Details != "" {
			for _, line := range strings.Split(it.Details, "\n") {
				r.para("  ", "  ", seg(line, ""))
			}
		}
		if len(it.Dependencies) > 0 {
			r.para("  ", "    ", unit("depends on:", GroupMeta), seg(strings.Join(it.Dependencies, ", "), ""))
		}
		if it.NextAction != "" {
			r.para("  ", "    ", seg("next:", GroupMeta), seg(it.NextAction, ""))
		}
		if len(it.Evidence) > 0 {
			r.para("  ", "  ", seg("evidence:", GroupMeta))
			for _, e := range it.Evidence {
				r.para("  - ", "    ", seg(e, ""))
			}
		}
	}
	return r.out
}

// startRender makes a renderer for width (at least MinRenderWidth); ok is
// false when the plan is empty and the renderer already holds EmptyText.
func startRender(p *Plan, width int) (*renderer, bool) {
	r := &renderer{width: max(width, MinRenderWidth)}
	if p == nil || len(p.Items) == 0 {
		r.para("", "", seg(EmptyText, GroupMeta))
		return r, false
	}
	return r, true
}

// RenderCompact is the plan window's form while a turn runs, so it covers
// little of the transcript: the header, each item in progress with its next
// action (first: Lua keeps it in view), the blocked items, and one line saying
// how to see the rest. Nothing is dropped from the plan itself; :FidoPlan
// and an idle turn show Render's full form.
func RenderCompact(p *Plan, width int) RenderedPlan {
	r, ok := startRender(p, width)
	if !ok {
		return r.out
	}
	done, total := p.Progress()
	r.para("", "",
		unit(fmt.Sprintf("Plan v%d", p.Version), GroupHeader),
		seg(fmt.Sprintf("· %d/%d done", done, total), GroupHeader))
	shown := 0
	for _, st := range []Status{InProgress, Blocked} {
		for _, it := range p.Items {
			if it.Status != st {
				continue
			}
			shown++
			group := StatusGroup(it.Status)
			r.para("", "  ", unit(StatusGlyph(it.Status), group), seg(it.ID, GroupHeader), seg(it.Title, ""))
			if it.NextAction != "" && it.Status == InProgress {
				r.para("  ", "    ", seg("next:", GroupMeta), seg(it.NextAction, ""))
			}
		}
	}
	if rest := total - shown; rest > 0 {
		r.para("", "", seg(fmt.Sprintf("+%d more · :FidoPlan shows all", rest), GroupMeta))
	}
	return r.out
}

func displayTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

type word struct{ text, group string }

// unit is text that wraps as one word (a label such as "depends on:").
func unit(text, group string) []word { return []word{{text, group}} }

// seg splits text into words that all carry group ("" for none).
func seg(text, group string) []word {
	var ws []word
	for _, f := range strings.Fields(text) {
		ws = append(ws, word{f, group})
	}
	return ws
}

type renderer struct {
	width int
	out   RenderedPlan
	line  strings.Builder
	cols  int  // display width of line
	body  bool // line holds a word (not only its indent)
}

func (r *renderer) blank() { r.out.Lines = append(r.out.Lines, "") }

// para word-wraps the segments: the first line starts with first, the
// following lines with rest. An empty paragraph is an empty line.
func (r *renderer) para(first, rest string, segs ...[]word) {
	r.start(first)
	for _, s := range segs {
		for _, w := range s {
			r.word(w, rest)
		}
	}
	r.flush()
}

func (r *renderer) start(indent string) {
	r.line.Reset()
	r.line.WriteString(indent)
	r.cols = DisplayWidth(indent)
	r.body = false
}

func (r *renderer) flush() {
	line := strings.TrimRight(r.line.String(), " ")
	r.out.Lines = append(r.out.Lines, line)
	if w := DisplayWidth(line); w > r.out.Width {
		r.out.Width = w
	}
	r.line.Reset()
	r.cols, r.body = 0, false
}

func (r *renderer) word(w word, rest string) {
	ww := DisplayWidth(w.text)
	if r.body {
		if r.cols+1+ww <= r.width {
			r.line.WriteByte(' ')
			r.cols++
			r.put(w.text, ww, w.group)
			return
		}
		r.flush()
		r.start(rest)
	}
	text := w.text
	for r.cols+ww > r.width {
		// Break a word that does not fit on a line of its own.
		cut, cutW := 0, 0
		for i, c := range text {
			cw := runeWidth(c)
			if r.cols+cutW+cw > r.width && cut > 0 {
				break
			}
			cut, cutW = i+utf8.RuneLen(c), cutW+cw
		}
		if cut == len(text) {
			break
		}
		r.put(text[:cut], cutW, w.group)
		text, ww = text[cut:], ww-cutW
		r.flush()
		r.start(rest)
	}
	r.put(text, ww, w.group)
}

func (r *renderer) put(text string, w int, group string) {
	start := r.line.Len()
	r.line.WriteString(text)
	r.cols += w
	r.body = true
	if group == "" {
		return
	}
	line := len(r.out.Lines)
	end := r.line.Len()
	if n := len(r.out.Highlights); n > 0 {
		last := &r.out.Highlights[n-1]
		if last.Line == line && last.Group == group && last.End >= start-1 {
			last.End = end
			return
		}
	}
	r.out.Highlights = append(r.out.Highlights, Highlight{Line: line, Start: start, End: end, Group: group})
}
