package nvim

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
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
	parts := []string{"SUBAGENT " + shortID(oneLine(s.AgentID))}
	if phase := oneLine(s.Phase); phase != "" {
		parts = append(parts, phase)
	}
	if detail := truncateRunes(oneLine(s.Detail), activityDetailMax); detail != "" {
		parts = append(parts, detail)
	}
	parts = append(parts, FormatElapsed(s.Elapsed))
	return ActivityPayload{Visible: true, Text: strings.Join(parts, activitySep), Group: SubagentGroup}
}

// FormatElapsed formats a duration for the bar: "0.4s", "4.2s", "59.9s",
// "1m03s", "1h02m03s". Negative durations count as zero.
func FormatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		// Truncate (not round) to tenths so 59.96s never shows as "60.0s".
		tenths := int64(d / (100 * time.Millisecond))
		return fmt.Sprintf("%d.%ds", tenths/10, tenths%10)
	}
	secs := int64(d / time.Second)
	h, m, s := secs/3600, secs/60%60, secs%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
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

// oneLine makes s safe for a one-line bar: invalid UTF-8, control and format
// characters are dropped, every run of whitespace (newlines included)
// becomes one space, and the ends are trimmed.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size <= 1:
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// truncateRunes bounds s to n characters, marking a cut with "…".
func truncateRunes(s string, n int) string { return tools.ShortenTo(s, n) }

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
