package permission

import (
	"fmt"
	"strconv"
	"strings"
)

// Effect is what a rule does with the commands it matches.
type Effect string

const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Origin says where a rule came from; /permissions shows it.
type Origin string

const (
	// OriginSession rules live until the host ends.
	OriginSession Origin = "session"
	// OriginWorkspace rules are stored in the workspace's state directory.
	OriginWorkspace Origin = "workspace"
	// OriginConfig rules come from setup({ permissions = … }).
	OriginConfig Origin = "config"
)

// Rule is one user rule. Command is a prefix in words ("go test" matches
// "go test ./... -run X" but not "go testify" or "go vet"); with Exact set it
// must be the whole command, arguments included. With Script set, Command
// is a whole command line (often a multi-line script) and the rule matches
// only that exact text (ScriptText): "Always …" proposes one when no
// prefix rule would let the line run. An allow rule may carry a
// Widening: what its commands may do beyond the sandbox's defaults
// (`allow git push with network`). Rules saved before script rules or
// widenings existed read back unchanged (the fields are omitted when
// empty), and an older Fido reading a rule with a widening reads the
// allow rule without it.
type Rule struct {
	Effect  Effect `json:"effect"`
	Command string `json:"command"`
	Exact   bool   `json:"exact,omitempty"`
	Script  bool   `json:"script,omitempty"`
	Origin  Origin `json:"origin,omitempty"`
	Widening
}

// same reports whether r and o are the same rule (origin aside).
func (r Rule) same(o Rule) bool {
	return r.Effect == o.Effect && r.Command == o.Command && r.Exact == o.Exact && r.Script == o.Script &&
		r.Widening.String() == o.Widening.String()
}

// ScriptText is a command line as a script rule holds it: without the
// trailing newlines, which change nothing.
func ScriptText(line string) string { return strings.TrimRight(line, "\r\n") }

// String is the rule as /permissions lists it: `allow go test`,
// `deny exact git push --force`, `allow script "set -e\ngo test ./..."`
// (the script quoted on one line as a Go string), `allow git push with
// network, read ~/.ssh`.
func (r Rule) String() string {
	var s string
	switch {
	case r.Script:
		s = fmt.Sprintf("%s script %s", r.Effect, strconv.Quote(r.Command))
	case r.Exact:
		s = fmt.Sprintf("%s exact %s", r.Effect, r.Command)
	default:
		s = fmt.Sprintf("%s %s", r.Effect, r.Command)
	}
	if w := r.Widening.String(); w != "" {
		s += " with " + w
	}
	return s
}

// Words are the rule's command words, split like a shell would split a
// plain, unquoted command line (none for a script rule).
func (r Rule) Words() []string {
	if r.Script {
		return nil
	}
	return strings.Fields(r.Command)
}

// Validate reports a rule that can never be meant: no words, an unknown
// effect.
func (r Rule) Validate() error {
	if r.Effect != Allow && r.Effect != Deny {
		return fmt.Errorf("rule %q: effect must be %q or %q", r.Command, Allow, Deny)
	}
	if r.Effect == Deny && !r.Widening.IsZero() {
		return fmt.Errorf("deny rule %q: only an allow rule can widen the sandbox", r.Command)
	}
	if r.Script {
		if strings.TrimSpace(r.Command) == "" {
			return fmt.Errorf("%s script rule has no script", r.Effect)
		}
		return nil
	}
	if len(r.Words()) == 0 {
		return fmt.Errorf("%s rule has no command words", r.Effect)
	}
	return nil
}

// ParseRule reads the form /permissions shows: `allow go test`,
// `deny exact git push --force`, `allow script "…"`, and any of them
// followed by ` with ` and a widening (`allow git push with network`;
// see ParseWidening). The command words of a rule are matched against
// commands read by the shell parser, as for every rule. Origin is the
// caller's to set.
func ParseRule(line string) (Rule, error) {
	line, with := splitWith(line)
	r, err := parseBareRule(line)
	if err != nil || with == "" {
		return r, err
	}
	if r.Widening, err = ParseWidening(with); err != nil {
		return Rule{}, fmt.Errorf("%q: %v", line+" with "+with, err)
	}
	return r, r.Validate()
}

// splitWith cuts a rule line at the last " with " whose rest reads as a
// widening, so a command word "with" stays a command word.
func splitWith(line string) (rule, with string) {
	for i := strings.LastIndex(line, " with "); i >= 0; i = strings.LastIndex(line[:i], " with ") {
		rest := strings.TrimSpace(line[i+len(" with "):])
		if _, err := ParseWidening(rest); err == nil {
			return strings.TrimSpace(line[:i]), rest
		}
	}
	return line, ""
}

func parseBareRule(line string) (Rule, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return Rule{}, fmt.Errorf("%q: want `allow|deny [exact] command words`", line)
	}
	r := Rule{Effect: Effect(f[0])}
	if len(f) > 2 && f[1] == "script" && strings.HasPrefix(f[2], `"`) {
		rest := strings.TrimSpace(line)
		rest = strings.TrimSpace(rest[len(f[0]):])
		rest = strings.TrimSpace(strings.TrimPrefix(rest, "script"))
		script, err := strconv.Unquote(rest)
		if err != nil {
			return Rule{}, fmt.Errorf("%q: a script rule holds its script as one quoted string: %v", line, err)
		}
		r.Script, r.Command = true, script
		return r, r.Validate()
	}
	f = f[1:]
	if f[0] == "exact" && len(f) > 1 {
		r.Exact = true
		f = f[1:]
	}
	r.Command = strings.Join(f, " ")
	return r, r.Validate()
}

// matchResult is how one rule relates to one simple command.
type matchResult int

const (
	noMatch matchResult = iota
	// mayMatch: a word the rule constrains is not a literal (an expansion,
	// a glob), so the rule could match once the shell expands it.
	mayMatch
	matches
)

// match compares a rule with one simple command's words. Words are compared
// in order; a non-literal word may expand to any number of fields, so from
// the first one on the rule only may match.
func (r Rule) match(words []word) matchResult {
	if r.Script {
		return noMatch
	}
	want := r.Words()
	for i, w := range want {
		if i >= len(words) {
			return noMatch
		}
		if !words[i].literal {
			return mayMatch
		}
		if words[i].text != w {
			return noMatch
		}
	}
	if !r.Exact {
		return matches
	}
	if extra := words[len(want):]; len(extra) > 0 {
		if !extra[0].literal {
			return mayMatch
		}
		return noMatch
	}
	return matches
}
