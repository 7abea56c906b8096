package permission

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Widening is what an allow rule lets its commands do beyond the sandbox's
// defaults (writes only in the workspace and a temp dir, .git read-only,
// no network, the user's secrets hidden). The user gives it, never the
// model: in an approval ("Run again with network") or in a rule
// (`allow git push with network`). Paths are absolute or start with ~/.
type Widening struct {
	// Network allows TCP and UDP connections.
	Network bool `json:"network,omitempty"`
	// GitWrite makes the workspace's .git writable.
	GitWrite bool `json:"git_write,omitempty"`
	// Write lists more directories or files the command may change.
	Write []string `json:"write,omitempty"`
	// Read lists protected paths (~/.ssh) the command may read.
	Read []string `json:"read,omitempty"`
	// Sockets lists Unix sockets (an ssh-agent) the command may connect to.
	Sockets []string `json:"sockets,omitempty"`
}

// IsZero reports a widening that widens nothing.
func (w Widening) IsZero() bool {
	return !w.Network && !w.GitWrite && len(w.Write) == 0 && len(w.Read) == 0 && len(w.Sockets) == 0
}

// Union is everything w or o allows.
func (w Widening) Union(o Widening) Widening {
	return Widening{
		Network: w.Network || o.Network, GitWrite: w.GitWrite || o.GitWrite,
		Write: unionPaths(w.Write, o.Write), Read: unionPaths(w.Read, o.Read), Sockets: unionPaths(w.Sockets, o.Sockets),
	}
}

// Intersect is what both w and o allow.
func (w Widening) Intersect(o Widening) Widening {
	return Widening{
		Network: w.Network && o.Network, GitWrite: w.GitWrite && o.GitWrite,
		Write: interPaths(w.Write, o.Write), Read: interPaths(w.Read, o.Read), Sockets: interPaths(w.Sockets, o.Sockets),
	}
}

// Covers reports whether w allows everything o does.
func (w Widening) Covers(o Widening) bool {
	return w.Union(o).String() == w.String()
}

// String is the widening as a rule and an approval show it, the words
// after "with": `network, git-write, read ~/.ssh, write /x`; "" when zero.
func (w Widening) String() string {
	var parts []string
	if w.Network {
		parts = append(parts, "network")
	}
	if w.GitWrite {
		parts = append(parts, "git-write")
	}
	for _, p := range w.Read {
		parts = append(parts, "read "+quotePath(p))
	}
	for _, p := range w.Write {
		parts = append(parts, "write "+quotePath(p))
	}
	for _, p := range w.Sockets {
		parts = append(parts, "socket "+quotePath(p))
	}
	return strings.Join(parts, ", ")
}

// Phrase says the widening in words for an approval's choices: "network,
// .git writable, ~/.ssh readable, write access to /x".
func (w Widening) Phrase() string {
	var parts []string
	if w.Network {
		parts = append(parts, "network")
	}
	if w.GitWrite {
		parts = append(parts, ".git writable")
	}
	for _, p := range w.Read {
		parts = append(parts, p+" readable")
	}
	for _, p := range w.Write {
		parts = append(parts, "write access to "+p)
	}
	for _, p := range w.Sockets {
		parts = append(parts, "access to socket "+p)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// quotePath quotes a path that holds a blank, a comma or a quote.
func quotePath(p string) string {
	if p == "" || strings.ContainsAny(p, " \t,\"\\") {
		return strconv.Quote(p)
	}
	return p
}

// ParseWidening reads what String writes.
func ParseWidening(s string) (Widening, error) {
	var w Widening
	rest := strings.TrimSpace(s)
	if rest == "" {
		return w, fmt.Errorf("nothing after \"with\"")
	}
	for rest != "" {
		var item string
		item, rest = nextItem(rest)
		word, arg, _ := strings.Cut(item, " ")
		arg = strings.TrimSpace(arg)
		if strings.HasPrefix(arg, `"`) {
			u, err := strconv.Unquote(arg)
			if err != nil {
				return Widening{}, fmt.Errorf("%q: a quoted path must be one Go string: %v", item, err)
			}
			arg = u
		}
		switch {
		case word == "network" && arg == "":
			w.Network = true
		case word == "git-write" && arg == "":
			w.GitWrite = true
		case (word == "read" || word == "write" || word == "socket") && arg != "":
			if !strings.HasPrefix(arg, "/") && !strings.HasPrefix(arg, "~/") {
				return Widening{}, fmt.Errorf("%q: the path must be absolute or start with ~/", item)
			}
			switch word {
			case "read":
				w.Read = unionPaths(w.Read, []string{arg})
			case "write":
				w.Write = unionPaths(w.Write, []string{arg})
			default:
				w.Sockets = unionPaths(w.Sockets, []string{arg})
			}
		default:
			return Widening{}, fmt.Errorf("%q: want network, git-write, read PATH, write PATH or socket PATH", item)
		}
	}
	return w, nil
}

// nextItem splits off the first comma-separated item, minding quotes.
func nextItem(s string) (item, rest string) {
	inQuote, esc := false, false
	for i, r := range s {
		switch {
		case esc:
			esc = false
		case r == '\\' && inQuote:
			esc = true
		case r == '"':
			inQuote = !inQuote
		case r == ',' && !inQuote:
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		}
	}
	return strings.TrimSpace(s), ""
}

func unionPaths(a, b []string) []string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range append(append([]string(nil), a...), b...) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func interPaths(a, b []string) []string {
	in := map[string]bool{}
	for _, p := range b {
		in[p] = true
	}
	var out []string
	for _, p := range a {
		if in[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// WideningRule is the rule an "Always …" answer to a widening question
// adds: the allow rule that covered the line's one command (or the prefix
// "Always" would propose for it), or else a script rule for exactly this
// line, with w added. Zero (no Command) when the line builds what it runs
// at run time: no rule can be proposed for it.
func (c Checker) WideningRule(line string, w Widening) Rule {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return Rule{}
	}
	a := newAnalysis(c, f)
	a.run(f)
	if a.opaque || a.denied != nil {
		return Rule{}
	}
	r := Rule{Effect: Allow, Command: ScriptText(line), Script: true}
	if len(a.matched) == 1 {
		if m := a.matched[0]; m != nil && !m.Script {
			r = Rule{Effect: Allow, Command: m.Command, Exact: m.Exact}
		} else if d := c.decide(line, true); d.Propose.Command != "" {
			r = Rule{Effect: Allow, Command: d.Propose.Command, Exact: d.Propose.Exact, Script: d.Propose.Script}
		}
	}
	r.Widening = w
	return r
}
