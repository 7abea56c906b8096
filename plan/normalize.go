package plan

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a plan. The update_plan schema and description state them,
// rendered from these constants (update_plan.go).
const (
	MaxItems          = 20
	MaxIDLen          = 40
	MaxReasonLen      = 200
	MaxTitleLen       = 120
	MaxDetailsLen     = 600
	MaxNextActionLen  = 200
	MaxEvidence       = 8
	MaxEvidenceLen    = 200
	maxListedProblems = 10
)

// TimeLayout is the format of Plan.UpdatedAt: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// idPattern: human-readable ids such as inspect, implement, verify-2, step.3.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// UpdateArgs are the update_plan arguments: the complete new plan.
type UpdateArgs struct {
	Reason string `json:"reason" jsonschema:"Why the plan changes now (at most {{.MaxReasonLen}} characters)."`
	Items  []Item `json:"items" jsonschema:"The complete new plan, in order; items left out are removed."`
}

// ValidationError lists every rule an update breaks. Each problem names the
// item (by id, or by index when the id itself is unusable) and the rule.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	ps := e.Problems
	more := 0
	if len(ps) > maxListedProblems {
		more = len(ps) - maxListedProblems
		ps = ps[:maxListedProblems]
	}
	msg := "invalid plan: " + strings.Join(ps, "; ")
	if more > 0 {
		msg += fmt.Sprintf("; and %d more problems", more)
	}
	return msg
}

// FormatTime renders t as an UpdatedAt timestamp.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Normalize validates an update and returns the normalized plan that replaces
// prev (nil when there is none): version prev.Version+1, UpdatedAt = now.
// Normalization trims whitespace, turns line breaks in single-line fields into
// spaces, drops empty optional fields and empty list entries, removes
// duplicate dependencies (keeping the first), lower-cases the status and keeps
// the item order as given. Every broken rule is reported in one
// *ValidationError.
func Normalize(in UpdateArgs, prev *Plan, now time.Time) (Plan, error) {
	version := 1
	if prev != nil {
		version = prev.Version + 1
	}
	reason, items, err := normalizeContent(in)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Version: version, UpdatedAt: FormatTime(now), Reason: reason, Items: items}, nil
}

// Validate reports whether p is a complete, valid, normalized plan (as loaded
// from disk or handed to Store.Replace).
func (p Plan) Validate() error {
	var probs []string
	reason, items, err := normalizeContent(p.Args())
	if err != nil {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		probs = append(probs, ve.Problems...)
	}
	if p.Version < 1 {
		probs = append(probs, fmt.Sprintf("version %d must be at least 1", p.Version))
	}
	if _, err := time.Parse(time.RFC3339Nano, p.UpdatedAt); err != nil {
		probs = append(probs, fmt.Sprintf("updatedAt %q is not an RFC 3339 time", p.UpdatedAt))
	}
	if err == nil && (reason != p.Reason || !itemsEqual(items, p.Items)) {
		probs = append(probs, "plan is not normalized")
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}

// Args returns the update_plan arguments that produce p's content.
func (p Plan) Args() UpdateArgs {
	c := p.Clone()
	return UpdateArgs{Reason: c.Reason, Items: c.Items}
}

// Clone returns a deep copy of p. Items is never nil in the copy, so it
// encodes as [] rather than null.
func (p Plan) Clone() Plan {
	c := p
	c.Items = make([]Item, len(p.Items))
	for i, it := range p.Items {
		c.Items[i] = it.clone()
	}
	return c
}

func (it Item) clone() Item {
	c := it
	if it.Dependencies != nil {
		c.Dependencies = append([]string(nil), it.Dependencies...)
	}
	if it.Evidence != nil {
		c.Evidence = append([]string(nil), it.Evidence...)
	}
	return c
}

// Progress counts the done items and all items.
func (p Plan) Progress() (done, total int) {
	for _, it := range p.Items {
		if it.Status == Done {
			done++
		}
	}
	return done, len(p.Items)
}

// Active returns the in_progress item, if any.
func (p Plan) Active() (Item, bool) {
	for _, it := range p.Items {
		if it.Status == InProgress {
			return it, true
		}
	}
	return Item{}, false
}

func normalizeContent(in UpdateArgs) (string, []Item, error) {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	reason := singleLine(in.Reason)
	switch {
	case reason == "":
		add("reason is required: say briefly why the plan changes")
	case runeLen(reason) > MaxReasonLen:
		add("reason is %d characters; the limit is %d", runeLen(reason), MaxReasonLen)
	}
	if len(in.Items) > MaxItems {
		add("the plan has %d items; the limit is %d (merge or drop finished detail)", len(in.Items), MaxItems)
		return "", nil, &ValidationError{Problems: probs}
	}

	items := make([]Item, len(in.Items))
	names := make([]string, len(in.Items)) // how problems refer to each item
	index := map[string]int{}              // id → first index
	for i, raw := range in.Items {
		it := Item{
			ID:         strings.TrimSpace(raw.ID),
			Title:      singleLine(raw.Title),
			Status:     Status(strings.ToLower(strings.TrimSpace(string(raw.Status)))),
			Details:    multiLine(raw.Details),
			NextAction: singleLine(raw.NextAction),
		}
		for _, d := range raw.Dependencies {
			d = strings.TrimSpace(d)
			if d != "" && !slices.Contains(it.Dependencies, d) {
				it.Dependencies = append(it.Dependencies, d)
			}
		}
		for _, e := range raw.Evidence {
			if e = singleLine(e); e != "" {
				it.Evidence = append(it.Evidence, e)
			}
		}
		items[i] = it

		names[i] = fmt.Sprintf("item %q", it.ID)
		switch {
		case it.ID == "":
			names[i] = fmt.Sprintf("items[%d]", i)
			add("%s: id is required", names[i])
		case !idPattern.MatchString(it.ID):
			names[i] = fmt.Sprintf("items[%d]", i)
			add("%s: id %q is not valid: use 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. inspect, implement, verify)", names[i], it.ID, MaxIDLen)
		default:
			if j, dup := index[it.ID]; dup {
				names[i] = fmt.Sprintf("items[%d]", i)
				add("%s: id %q is already used by items[%d]; ids must be unique", names[i], it.ID, j)
			} else {
				index[it.ID] = i
			}
		}
	}

	inProgress := []string{}
	for i, it := range items {
		n := names[i]
		switch {
		case it.Title == "":
			add("%s: title is required", n)
		case runeLen(it.Title) > MaxTitleLen:
			add("%s: title is %d characters; the limit is %d", n, runeLen(it.Title), MaxTitleLen)
		}
		switch it.Status {
		case Pending, InProgress, Blocked, Done:
		case "":
			add("%s: status is required (pending, in_progress, blocked or done)", n)
		default:
			add("%s: status %q is not one of pending, in_progress, blocked, done", n, it.Status)
		}
		if it.Status == InProgress {
			inProgress = append(inProgress, n)
		}
		if it.NextAction == "" && (it.Status == Pending || it.Status == InProgress || it.Status == Blocked) {
			add("%s: next_action is required when status is %s", n, it.Status)
		}
		if l := runeLen(it.Details); l > MaxDetailsLen {
			add("%s: details are %d characters; the limit is %d", n, l, MaxDetailsLen)
		}
		if l := runeLen(it.NextAction); l > MaxNextActionLen {
			add("%s: next_action is %d characters; the limit is %d", n, l, MaxNextActionLen)
		}
		if len(it.Evidence) > MaxEvidence {
			add("%s: %d evidence entries; the limit is %d (keep the most telling)", n, len(it.Evidence), MaxEvidence)
		}
		for k, e := range it.Evidence {
			if l := runeLen(e); l > MaxEvidenceLen {
				add("%s: evidence[%d] is %d characters; the limit is %d (record a command or file:line, not output)", n, k, l, MaxEvidenceLen)
			}
		}
		for _, d := range it.Dependencies {
			switch _, ok := index[d]; {
			case d == it.ID:
				add("%s: depends on itself", n)
			case !ok:
				add("%s: dependency %q does not exist in this plan", n, d)
			}
		}
	}
	if len(inProgress) > 1 {
		add("%s are all in_progress; keep at most one item in_progress", strings.Join(inProgress, ", "))
	}
	if cycle := findCycle(items, index); cycle != nil {
		add("item %q: dependency cycle %s", cycle[0], strings.Join(cycle, " -> "))
	}
	if len(probs) > 0 {
		return "", nil, &ValidationError{Problems: probs}
	}
	return reason, items, nil
}

// findCycle returns one dependency cycle as a path that starts and ends with
// the same id, or nil. Self-dependencies and unknown ids are reported
// elsewhere and ignored here.
func findCycle(items []Item, index map[string]int) []string {
	const (
		unseen = iota
		active
		finished
	)
	state := make([]int, len(items))
	var stack []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = active
		stack = append(stack, items[i].ID)
		for _, d := range items[i].Dependencies {
			j, ok := index[d]
			if !ok || j == i {
				continue
			}
			switch state[j] {
			case active:
				for k, id := range stack {
					if id == d {
						return append(append([]string(nil), stack[k:]...), d)
					}
				}
			case unseen:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = finished
		return nil
	}
	for i, it := range items {
		if j, ok := index[it.ID]; !ok || j != i {
			continue // an invalid or duplicate id takes no part
		}
		if state[i] == unseen {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// singleLine trims s, turns line breaks and tabs into spaces and drops other
// control characters.
func singleLine(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// multiLine trims s and each line's end, keeps line breaks (CRLF becomes LF),
// turns tabs into spaces and drops other control characters.
func multiLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func itemsEqual(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Title != y.Title || x.Status != y.Status || x.Details != y.Details ||
			x.NextAction != y.NextAction || !slices.Equal(x.Dependencies, y.Dependencies) || !slices.Equal(x.Evidence, y.Evidence) {
			return false
		}
	}
	return true
}
