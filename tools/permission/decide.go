package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Verdict is what to do with a command line.
type Verdict int

const (
	// Ask the user.
	Ask Verdict = iota
	// Run without asking: every command matched an allow rule.
	Run
	// Refuse without asking: a deny rule matched.
	Refuse
)

func (v Verdict) String() string {
	switch v {
	case Run:
		return "run"
	case Refuse:
		return "refuse"
	}
	return "ask"
}

// Decision is the verdict on one command line and why.
type Decision struct {
	Verdict Verdict
	// Rule is the deny rule that refused the line (Refuse).
	Rule *Rule
	// Reasons say, one short phrase each, why the user must be asked.
	Reasons []string
	// Suggest is the command prefix Fido proposes for an "always" rule: the
	// first words of the first command that no allow rule covers
	// ("go test" for `go test ./... -run X`). Empty when nothing fits.
	Suggest string
}

// Checker decides command lines against rules for one workspace.
type Checker struct {
	// Root is the workspace root (absolute); the command runs there.
	Root string
	// Rules in any order: a deny rule always wins over an allow rule.
	Rules []Rule
}

// Decide parses line and decides it. It never runs anything; it only looks
// at symlinks on the paths of output redirections.
func (c Checker) Decide(line string) Decision {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return Decision{Verdict: Ask, Reasons: []string{"the shell parser cannot read it: " + err.Error()}}
	}
	a := analysis{checker: c}
	syntax.Walk(f, a.visit)
	if a.changesDir {
		for _, t := range a.relativeTargets {
			a.ask("writes to %s after changing directory", t)
		}
	}
	if a.denied != nil {
		return Decision{Verdict: Refuse, Rule: a.denied}
	}
	d := Decision{Verdict: Run, Suggest: a.suggest}
	if len(a.reasons) > 0 {
		d.Verdict = Ask
		d.Reasons = a.reasons
	}
	return d
}

// word is one shell word after quote removal, when it is a plain literal.
type word struct {
	text    string
	literal bool
}

// analysis collects what one walk over a command line found.
type analysis struct {
	checker         Checker
	denied          *Rule
	reasons         []string
	suggest         string
	changesDir      bool
	relativeTargets []string
}

func (a *analysis) ask(format string, args ...any) {
	r := fmt.Sprintf(format, args...)
	for _, have := range a.reasons {
		if have == r {
			return
		}
	}
	a.reasons = append(a.reasons, r)
}

func (a *analysis) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CallExpr:
		a.assigns(n.Assigns)
		if len(n.Args) > 0 {
			a.command(literalWords(n.Args))
		}
	case *syntax.DeclClause:
		a.assigns(n.Args)
	case *syntax.Redirect:
		a.redirect(n)
	}
	return true
}

// assigns asks about assignments that change which program runs or how.
func (a *analysis) assigns(as []*syntax.Assign) {
	for _, as := range as {
		if as.Name != nil && dangerousVariable(as.Name.Value) {
			a.ask("sets %s", as.Name.Value)
		}
	}
}

// command checks one simple command (wrappers such as env or timeout are
// looked through to the command they run).
func (a *analysis) command(ws []word) {
	ws, ok := a.unwrap(ws)
	if !ok || len(ws) == 0 {
		return
	}
	name := ws[0]
	if !name.literal {
		a.ask("the command name is computed at run time")
		a.checkDeny(ws)
		return
	}
	if a.checkDeny(ws) {
		return
	}
	base := filepath.Base(name.text)
	switch {
	case neverStatic[base]:
		a.ask("%s runs code that cannot be checked before it runs", base)
		return
	case escalates[base]:
		a.ask("%s runs a command as another user", base)
		return
	case shells[base] && readsCommands(ws[1:]):
		a.ask("%s reads commands from -c or its input", base)
		return
	case base == "xargs" || base == "parallel" || base == "watch":
		a.ask("%s runs commands built from its input or arguments", base)
		return
	case base == "find" && findRuns(ws[1:]):
		a.ask("find runs or deletes through -exec, -ok or -delete")
		return
	}
	if changesDir[name.text] {
		a.changesDir = true
	}
	for i := range a.checker.Rules {
		r := &a.checker.Rules[i]
		if r.Effect == Allow && r.match(ws) == matches {
			return
		}
	}
	a.ask("no allow rule covers %s", shorten(joinWords(ws)))
	if a.suggest == "" {
		a.suggest = SuggestPrefix(ws)
	}
}

// checkDeny refuses (true) on a deny rule that matches, and asks on one that
// may match after expansion.
func (a *analysis) checkDeny(ws []word) bool {
	for i := range a.checker.Rules {
		r := &a.checker.Rules[i]
		if r.Effect != Deny {
			continue
		}
		switch r.match(ws) {
		case matches:
			if a.denied == nil {
				a.denied = r
			}
			return true
		case mayMatch:
			a.ask("it may expand to a command the rule %q denies", r.String())
		}
	}
	return false
}

// unwrap looks through commands that run another command with the rest of
// their arguments (env, timeout, nice, …). ok is false when the wrapper's
// arguments cannot be read and the user was asked instead.
func (a *analysis) unwrap(ws []word) ([]word, bool) {
	for len(ws) > 0 && ws[0].literal {
		spec, isWrapper := wrappers[filepath.Base(ws[0].text)]
		if !isWrapper {
			return ws, true
		}
		name := ws[0].text
		ws = ws[1:]
		// Options, and the arguments of those that take one.
		for len(ws) > 0 && ws[0].literal && strings.HasPrefix(ws[0].text, "-") && ws[0].text != "-" {
			opt := ws[0].text
			ws = ws[1:]
			if opt == "--" {
				break
			}
			if spec.refuse[opt] {
				a.ask("%s %s cannot be checked before it runs", name, opt)
				return nil, false
			}
			if spec.withArg[opt] && len(ws) > 0 {
				ws = ws[1:]
			}
		}
		if len(ws) > 0 && !ws[0].literal && strings.HasPrefix(ws[0].text, "-") {
			a.ask("%s has options computed at run time", name)
			return nil, false
		}
		if spec.envAssigns {
			for len(ws) > 0 && strings.Contains(ws[0].text, "=") && !strings.HasPrefix(ws[0].text, "=") {
				if !ws[0].literal {
					a.ask("%s sets a variable computed at run time", name)
					return nil, false
				}
				if v := ws[0].text[:strings.IndexByte(ws[0].text, '=')]; dangerousVariable(v) {
					a.ask("sets %s", v)
				}
				ws = ws[1:]
			}
		}
		for i := 0; i < spec.positional && len(ws) > 0; i++ {
			ws = ws[1:]
		}
	}
	return ws, true
}

// redirect asks about a write outside the workspace or to a computed target.
func (a *analysis) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	case syntax.DplOut:
		// >&2 and >&- duplicate or close a descriptor; >&file writes a file.
		if w := literalWord(r.Word); w.literal && (isDigits(w.text) || w.text == "-") {
			return
		}
	default:
		return
	}
	w := literalWord(r.Word)
	if !w.literal {
		a.ask("writes to a file named at run time")
		return
	}
	switch w.text {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return
	}
	if strings.HasPrefix(w.text, "/dev/fd/") && isDigits(strings.TrimPrefix(w.text, "/dev/fd/")) {
		return
	}
	if !filepath.IsAbs(w.text) {
		a.relativeTargets = append(a.relativeTargets, w.text)
	}
	if !a.checker.inside(w.text) {
		a.ask("writes to %s, outside the workspace", w.text)
		return
	}
	for _, c := range strings.Split(filepath.ToSlash(filepath.Clean(w.text)), "/") {
		if strings.EqualFold(c, ".git") {
			a.ask("writes into .git (git's config and hooks can run commands)")
			return
		}
	}
}

// inside reports whether target (relative to the root, or absolute) stays in
// the workspace once its existing symlinks are resolved.
func (c Checker) inside(target string) bool {
	if c.Root == "" {
		return false
	}
	p := target
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Root, p)
	}
	p = filepath.Clean(p)
	root, err := filepath.EvalSymlinks(c.Root)
	if err != nil {
		root = filepath.Clean(c.Root)
	}
	return within(root, resolveExisting(p))
}

// resolveExisting resolves the symlinks of the longest existing prefix of p
// and appends the rest.
func resolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			if r, err := filepath.EvalSymlinks(cur); err == nil {
				return filepath.Join(r, rest)
			}
			return p
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func shorten(s string) string {
	const limit = 60
	if r := []rune(s); len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return s
}
