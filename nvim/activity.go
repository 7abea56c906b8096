package nvim

import (
	"strings"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/text"
)

// ActivityPayload is what Lua's require("fido.activity").apply receives:
// the subagent bar's text and highlight group.
type ActivityPayload struct {
	Visible bool   `msgpack:"visible"`
	Text    string `msgpack:"text"`
	Group   string `msgpack:"group"`
}

// SubagentGroup is the highlight group of the subagent bar.
const SubagentGroup = "FidoSubagent"

const (
	// activityIDLen is how many trailing characters of the agent id the bar
	// shows: enough to tell runs apart, short enough for a narrow window.
	activityIDLen = 8
	// activityDetailMax bounds the detail (in characters); the prefix
	// (SUBAGENT, id, phase) and the elapsed time are never truncated.
	activityDetailMax = 60
	activitySep       = " · "
)

// ActivityView renders a subagent status as the bar's payload:
// "SUBAGENT <short id> · <phase> · <detail> · <elapsed>" in FidoSubagent.
// A nil status hides the bar. Every part is reduced to one line of printable
// text; an empty detail is left out.
func ActivityView(s *agent.SubagentStatus) ActivityPayload {
	if s == nil {
		return ActivityPayload{Group: SubagentGroup}
	}
	parts := []string{"SUBAGENT " + shortID(text.Collapse(s.AgentID))}
	if phase := text.Collapse(s.Phase); phase != "" {
		parts = append(parts, phase)
	}
	if detail := text.ShortenTo(text.Collapse(s.Detail), activityDetailMax); detail != "" {
		parts = append(parts, detail)
	}
	parts = append(parts, text.Clock(s.Elapsed))
	return ActivityPayload{Visible: true, Text: strings.Join(parts, activitySep), Group: SubagentGroup}
}

// shortID keeps the last activityIDLen characters of an agent id (ids are
// runner-minted with a random tail, so the tail is the distinctive part).
func shortID(id string) string {
	if id == "" {
		return "?"
	}
	r := []rune(id)
	if len(r) <= activityIDLen {
		return id
	}
	return string(r[len(r)-activityIDLen:])
}

// activitySurface is the subagent bar. Not safe for concurrent use (UI
// guards it).
type activitySurface struct {
	sub   *agent.SubagentStatus // nil: no subagent runs, the bar is hidden
	dirty bool
}

// set shows s (a copy; nil hides the bar).
func (a *activitySurface) set(s *agent.SubagentStatus) {
	if s != nil {
		c := *s
		s = &c
	}
	a.sub, a.dirty = s, true
}

// take puts the bar's payload into b when it changed.
func (a *activitySurface) take(b *Batch) {
	if !a.dirty {
		return
	}
	v := ActivityView(a.sub)
	b.Activity = &v
	a.dirty = false
}
