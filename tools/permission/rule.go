package permission

import (
	"fmt"
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
// must be the whole command, arguments included.
type Rule struct {
	Effect  Effect `json:"effect"`
	Command string `json:"command"`
	Exact   bool   `json:"exact,omitempty"`
	Origin  Origin `json:"origin,omitempty"`
}

// String is the rule as /permissions lists it: `allow go test`,
// `deny exact git push --force`.
func (r Rule) String() string {
	if r.Exact {
		return fmt.Sprintf("%s exact %s", r.Effect, r.Command)
	}
	return fmt.Sprintf("%s %s", r.Effect, r.Command)
}

// Words are the rule's command words, split like a shell would split a
// plain, unquoted command line.
func (r Rule) Words() []string { return strings.Fields(r.Command) }

// Validate reports a rule that can never be meant: no words, an unknown
// effect.
func (r Rule) Validate() error {
	if r.Effect != Allow && r.Effect != Deny {
		return fmt.Errorf("rule %q: effect must be %q or %q", r.Command, Allow, Deny)
	}
	if len(r.Words()) == 0 {
		return fmt.Errorf("%s rule has no command words", r.Effect)
	}
	return nil
}

// ParseRule reads the form /permissions shows: `allow go test`,
// `deny exact git push --force` (origin is the caller's to set).
func ParseRule(line string) (Rule, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return Rule{}, fmt.Errorf("%q: want `allow|deny [exact] command words`", line)
	}
	r := Rule{Effect: Effect(f[0])}
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
