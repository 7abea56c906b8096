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
	// Suggest is the command prefix of the first command that no allow rule
	// covers: its first words ("go test" for `go test ./... -run X`).
	// Empty when nothing fits.
	Suggest string
	// Propose is the rule an "Always …" answer adds (Ask only): the prefix
	// rule for Suggest when that rule alone lets this very line run,
	// otherwise a script rule for exactly this line. Zero (no Command) when
	// the line builds what it runs at run time (eval, source, a computed
	// command name, sh -c, xargs …) or escalates privileges: no rule is
	// proposed for those.
	Propose Rule
	// Concerns says what each reason is about (one per reason, in order),
	// so a sandbox can tell which reasons it makes harmless.
	Concerns []Concern
	// Cautions are what the line will probably need beyond a sandbox's
	// defaults (the network, .git writes) and deletions it makes, whatever
	// the verdict (Refuse aside).
	Cautions []Caution
	// Widen is what the allow rules let this line do beyond the sandbox's
	// defaults: every command in it (inert builtins such as cd and echo
	// aside) is covered by an allow rule with that widening, or the line
	// is approved by a script rule with it. Zero when a command has none.
	Widen Widening
}

// Checker decides command lines against rules for one workspace.
type Checker struct {
	// Root is the workspace root (absolute); the command runs there.
	Root string
	// Rules in any order: a deny rule always wins over an allow rule.
	Rules []Rule
}

// Decide parses line and decides it. It never runs anything; it only looks
// at symlinks on the paths a command writes.
//
// It fails closed: the line runs unasked only when it runs at least one
// command, every command matches an allow rule, no word of it is evaluated
// by bash in a way that can run code (arithmetic on variables, array
// subscripts, ${!x}, ${x@P}, namerefs …), no variable that decides what a
// later command runs is set (dangerousVariable), no option an allow rule does
// not name can run a program or write outside the workspace (the escape
// table, escapes.go), and nothing writes outside the workspace or into .git.
// A script rule approves exactly its script, except what cannot be read
// from the text (see Decision.Propose); deny rules always win.
func (c Checker) Decide(line string) Decision { return c.decide(line, true) }

func (c Checker) decide(line string, propose bool) Decision {
	if r := c.scriptRule(line, Deny); r != nil {
		return Decision{Verdict: Refuse, Rule: r}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return Decision{Verdict: Ask, Reasons: []string{"the shell parser cannot read it: " + err.Error()}, Concerns: []Concern{ConcernUnreadable}}
	}
	a := newAnalysis(c, f)
	a.run(f)
	if a.denied != nil {
		return Decision{Verdict: Refuse, Rule: a.denied}
	}
	widen := a.widening()
	if s := c.scriptRule(line, Allow); s != nil && !a.opaque {
		widen = widen.Union(s.Widening)
		if len(a.reasons) > 0 {
			return Decision{Verdict: Run, Suggest: a.suggest, Cautions: a.cautions, Widen: widen}
		}
	}
	if len(a.reasons) == 0 {
		return Decision{Verdict: Run, Suggest: a.suggest, Cautions: a.cautions, Widen: widen}
	}
	d := Decision{Verdict: Ask, Reasons: a.reasons, Concerns: a.concerns, Suggest: a.suggest, Cautions: a.cautions, Widen: widen}
	if propose && !a.opaque {
		d.Propose = c.proposal(line, a.suggest)
	}
	return d
}

// scriptRule is the first script rule with effect e whose script is line.
func (c Checker) scriptRule(line string, e Effect) *Rule {
	s := ScriptText(line)
	for i := range c.Rules {
		if r := &c.Rules[i]; r.Script && r.Effect == e && r.Command == s {
			return r
		}
	}
	return nil
}

// proposal is the rule "Always …" offers: the suggested prefix when that
// rule alone makes the line run, else the line itself as a script rule.
func (c Checker) proposal(line, suggest string) Rule {
	if suggest != "" {
		r := Rule{Effect: Allow, Command: suggest}
		with := Checker{Root: c.Root, Rules: append(append([]Rule(nil), c.Rules...), r)}
		if with.decide(line, false).Verdict == Run {
			return r
		}
	}
	return Rule{Effect: Allow, Command: ScriptText(line), Script: true}
}

// word is one shell word after quote removal, when it is a plain literal.
type word struct {
	text    string
	literal bool
	node    *syntax.Word
}

// analysis collects what one walk over a command line found.
type analysis struct {
	checker  Checker
	denied   *Rule
	reasons  []string
	concerns []Concern // what each reason is about
	cautions []Caution
	// granted holds, for each command checked against the rules (inert
	// builtins left out), the widening its matching allow rules give.
	granted []Widening
	// matched holds, for each of those commands, the allow rule that
	// covered it with the most words (nil: none).
	matched []*Rule
	// opaque: a reason says that what runs is not in the text (eval, a
	// computed command name, sh -c, sudo …); no script rule covers it.
	opaque          bool
	suggest         string
	changesDir      bool
	relativeTargets []string
	// commands counts the simple commands checked against the rules,
	// statements every statement: a line of only assignments, tests or
	// arithmetic is not "nothing to check".
	commands, statements int
	// loopVars are for-loop variables over plain words, with the loop
	// bodies where they hold one of those words (mayBeOption).
	loopVars map[string][]span
	// arrays are the names the line uses as arrays (declare re-parses a
	// value like '([$(cmd)]=1)' for them).
	arrays map[string]bool
	// splitOnly are the IFS= assignments before read, which only split
	// what read reads.
	splitOnly map[*syntax.Assign]bool
	// stack holds the nodes from the root to the one being visited.
	stack []syntax.Node
	// cds counts the directory changes (cd, pushd) seen so far.
	cds int
}

// repeated reports whether the node being visited can run more than once
// or at another time (in a loop or a function body).
func (a *analysis) repeated() bool {
	for _, n := range a.stack {
		switch n.(type) {
		case *syntax.ForClause, *syntax.WhileClause, *syntax.FuncDecl:
			return true
		}
	}
	return false
}

type span struct{ from, to syntax.Pos }

func newAnalysis(c Checker, f *syntax.File) *analysis {
	a := &analysis{checker: c, loopVars: map[string][]span{}, arrays: map[string]bool{}, splitOnly: map[*syntax.Assign]bool{}}
	if f != nil {
		a.prepass(f)
	}
	return a
}

func (a *analysis) run(f *syntax.File) {
	syntax.Walk(f, a.visit)
	if a.changesDir {
		for _, t := range a.relativeTargets {
			a.askAs(ConcernCode, "writes to %s after changing directory", t)
		}
	}
	if a.commands == 0 && a.statements > 0 {
		a.askAs(ConcernUncovered, "it runs no command a rule covers (only assignments, declarations, tests or arithmetic)")
	}
}

// askAs adds a reason to ask, with what it is about (Concern).
func (a *analysis) askAs(k Concern, format string, args ...any) {
	r := fmt.Sprintf(format, args...)
	for _, have := range a.reasons {
		if have == r {
			return
		}
	}
	a.reasons = append(a.reasons, r)
	a.concerns = append(a.concerns, k)
}

// askOpaqueAs asks about something whose effect is not in the text.
func (a *analysis) askOpaqueAs(k Concern, format string, args ...any) {
	a.opaque = true
	a.askAs(k, format, args...)
}

func (a *analysis) visit(n syntax.Node) bool {
	if n == nil {
		a.stack = a.stack[:len(a.stack)-1]
		return true
	}
	a.stack = append(a.stack, n)
	switch n := n.(type) {
	case *syntax.CoprocClause:
		if w := literalWord(n.Name); n.Name != nil && w.literal {
			a.setVar(w.text)
		} else if n.Name != nil {
			a.askAs(ConcernCode, "coproc is named at run time")
		}
	case *syntax.File, *syntax.Comment, *syntax.Word, *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted,
		*syntax.CmdSubst, *syntax.ProcSubst, *syntax.Subshell, *syntax.Block, *syntax.IfClause,
		*syntax.WhileClause, *syntax.ForClause, *syntax.BinaryCmd, *syntax.FuncDecl, *syntax.CaseClause,
		*syntax.CaseItem, *syntax.TimeClause, *syntax.ArrayExpr, *syntax.ExtGlob,
		*syntax.BraceExp, *syntax.BinaryArithm, *syntax.UnaryArithm, *syntax.ParenArithm,
		*syntax.BinaryTest, *syntax.UnaryTest, *syntax.ParenTest:
		// Structure: what they hold is checked where it matters.
	case *syntax.Stmt:
		a.statements++
	case *syntax.CallExpr:
		if len(n.Args) > 0 {
			ws := literalWords(n.Args)
			var env []string
			for _, as := range n.Assigns {
				if as.Name == nil {
					continue
				}
				// IFS= read -r line: IFS only splits what read reads.
				if as.Name.Value == "IFS" && ws[0].literal && (ws[0].text == "read" || ws[0].text == "mapfile" || ws[0].text == "readarray") {
					a.splitOnly[as] = true
					continue
				}
				env = append(env, as.Name.Value)
			}
			a.command(ws, env)
		}
	case *syntax.Assign:
		a.assign(n)
	case *syntax.DeclClause:
		a.decl(n)
	case *syntax.ArrayElem:
		if n.Index != nil && !pureArith(n.Index) {
			a.askAs(ConcernCode, "an array subscript is evaluated at run time (a[$(cmd)] runs cmd)")
		}
	case *syntax.WordIter:
		a.setVar(n.Name.Value)
	case *syntax.CStyleLoop:
		for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			a.arith(x)
		}
	case *syntax.ArithmExp:
		a.arith(n.X)
	case *syntax.ArithmCmd:
		a.arith(n.X)
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			a.arith(x)
		}
	case *syntax.TestClause:
		a.test(n.X)
	case *syntax.ParamExp:
		a.param(n)
	case *syntax.Redirect:
		a.redirect(n)
	default:
		a.askAs(ConcernUnreadable, "it uses a shell construct Fido does not analyse (%T)", n)
	}
	return true
}

// assign checks one assignment (before a command, alone, or declared).
func (a *analysis) assign(as *syntax.Assign) {
	if as.Name == nil || as.Naked && as.Value == nil && as.Array == nil {
		return // declare's flags and bare names are read by decl
	}
	if as.Index != nil && !pureArith(as.Index) {
		a.askAs(ConcernCode, "an array subscript is evaluated at run time (a[$(cmd)] runs cmd)")
	}
	if !a.splitOnly[as] {
		a.setVar(as.Name.Value)
	}
}

// setVar asks about assigning a variable that decides what later commands
// run or load.
func (a *analysis) setVar(name string) {
	if !isName(name) {
		a.askAs(ConcernUnreadable, "it assigns %q, which is not a plain variable name", name)
		return
	}
	if dangerousVariable(name) {
		a.askAs(ConcernCode, "sets %s", name)
	}
}

// decl checks declare, typeset, local, export and readonly: their flags
// and the quoted NAME=value words the parser leaves unsplit.
func (a *analysis) decl(d *syntax.DeclClause) {
	variant := d.Variant.Value
	allowed := map[string]string{
		"declare": "xrgpfFlutaAI", "typeset": "xrgpfFlutaAI", "local": "xrgpfFlutaAI",
		"export": "fnp", "readonly": "aAfp",
	}[variant]
	if allowed == "" {
		a.askAs(ConcernUnreadable, "%s is not analysed", variant)
		return
	}
	array := false
	for _, as := range d.Args {
		if !as.Naked || as.Name != nil {
			continue
		}
		w := literalWord(as.Value)
		if !w.literal {
			a.askAs(ConcernCode, "%s has an argument computed at run time", variant)
			continue
		}
		if strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+") {
			for _, f := range w.text[1:] {
				switch {
				case f == 'i':
					a.askAs(ConcernCode, "%s -i evaluates its values as arithmetic (a value like a[$(cmd)] runs cmd)", variant)
				case f == 'n':
					a.askAs(ConcernCode, "%s -n makes a name reference (assigning it sets another variable)", variant)
				case f == 'a' || f == 'A':
					array = true
				case !strings.ContainsRune(allowed, f):
					a.askAs(ConcernUnreadable, "%s -%c is not analysed", variant, f)
				}
			}
			continue
		}
		name, value, _ := strings.Cut(w.text, "=")
		if i := strings.IndexByte(name, '['); i >= 0 {
			a.askAs(ConcernCode, "%s %s: the subscript is evaluated at run time", variant, name)
			continue
		}
		a.setVar(name)
		if strings.HasPrefix(value, "(") && variant != "export" {
			a.askAs(ConcernCode, "%s re-reads a quoted array value, whose subscripts run commands", variant)
		}
	}
	if variant == "export" {
		return
	}
	for _, as := range d.Args {
		if as.Naked || as.Name == nil || as.Value == nil {
			continue
		}
		if !array && !a.arrays[as.Name.Value] {
			continue
		}
		if w := literalWord(as.Value); !w.literal || strings.HasPrefix(w.text, "(") {
			a.askAs(ConcernCode, "%s re-reads the value of array %s, whose subscripts run commands", variant, as.Name.Value)
		}
	}
}

// arith asks about an arithmetic expression that reads a variable: bash
// evaluates a variable's value as arithmetic again, and an array
// subscript in it (a[$(cmd)]) runs commands.
func (a *analysis) arith(x syntax.ArithmExpr) {
	if x != nil && !pureArith(x) {
		a.askAs(ConcernCode, "arithmetic reads variables or expansions (a value like a[$(cmd)] runs cmd)")
	}
}

// param asks about parameter expansions that evaluate something.
func (a *analysis) param(p *syntax.ParamExp) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Excl && p.Names == 0 && !allIndex(p.Index) {
		a.askAs(ConcernCode, "${!%s} expands the variable named by a value (a[$(cmd)] there runs cmd)", name)
	}
	if p.Index != nil && !allIndex(p.Index) && !pureArith(p.Index) {
		a.askAs(ConcernCode, "the subscript of ${%s[…]} is evaluated at run time", name)
	}
	if p.Slice != nil && (p.Slice.Offset != nil && !pureArith(p.Slice.Offset) || p.Slice.Length != nil && !pureArith(p.Slice.Length)) {
		a.askAs(ConcernCode, "the offsets of ${%s:…} are arithmetic that reads variables", name)
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.OtherParamOps:
			if op := literalWord(p.Exp.Word); !op.literal || len(op.text) != 1 || !strings.Contains("QEAaUuLKk", op.text) {
				a.askAs(ConcernCode, "${%s@%s} expands the value as a prompt, running the commands in it", name, op.text)
			}
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			a.setVar(name)
		}
	}
	if p.NestedParam != nil || p.Width || p.IsSet || p.Flags != nil || len(p.Modifiers) > 0 {
		a.askAs(ConcernUnreadable, "${…} uses a form Fido does not analyse")
	}
}

// test asks about [[ ]] operators that evaluate their operands: -eq and
// the other arithmetic comparisons, -v and -R with a subscript.
func (a *analysis) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if !numberWord(x.X) || !numberWord(x.Y) {
				a.askAs(ConcernCode, "[[ %s ]] evaluates its operands as arithmetic (a value like a[$(cmd)] runs cmd)", x.Op)
			}
		}
		a.test(x.X)
		a.test(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); !ok || !isVarRef(literalWord(w)) {
				a.askAs(ConcernCode, "[[ %s ]] evaluates a subscript at run time", x.Op)
			}
		}
		a.test(x.X)
	case *syntax.ParenTest:
		a.test(x.X)
	}
}

// numberWord: a test operand that is a plain integer (or $#, ${#x} …).
func numberWord(x syntax.TestExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	if len(w.Parts) == 1 {
		if p, ok := w.Parts[0].(*syntax.ParamExp); ok {
			return numericParam(p)
		}
	}
	l := literalWord(w)
	return l.literal && isNumber(strings.TrimPrefix(strings.TrimPrefix(l.text, "-"), "+"))
}

// command checks one simple command (wrappers such as env or timeout are
// looked through to the command they run). env are the variables assigned
// before it.
func (a *analysis) command(all []word, env []string) {
	a.commands++
	ws, more, ok := a.unwrap(all)
	if !ok {
		return
	}
	env = append(env, more...)
	if len(ws) == 0 {
		ws = all[:1] // a wrapper alone (env, exec with redirections) is the command
	}
	name := ws[0]
	if !name.literal {
		a.askOpaqueAs(ConcernOpaque, "the command name is computed at run time")
		a.checkDeny(ws)
		return
	}
	if a.checkDeny(ws) {
		return
	}
	base := filepath.Base(name.text)
	switch {
	case neverStatic[base]:
		a.askOpaqueAs(ConcernOpaque, "%s runs code that cannot be checked before it runs", base)
		return
	case escalates[base]:
		a.askOpaqueAs(ConcernEscalation, "%s runs a command as another user", base)
		return
	case shells[base] && readsCommands(ws[1:]):
		a.askOpaqueAs(ConcernOpaque, "%s reads commands from -c or its input", base)
		return
	case runsCommands[base]:
		a.askOpaqueAs(ConcernOpaque, "%s runs commands built from its input or arguments", base)
		return
	}
	if changesDir[name.text] {
		a.changesDir = true
	}
	c := &call{a: a, ws: ws, name: base, env: env}
	c.check()
	a.caution(ws, base)
	approved := -1
	var best *Rule
	var granted Widening
	for i := range a.checker.Rules {
		r := &a.checker.Rules[i]
		if r.Effect == Allow && r.match(ws) == matches {
			n := len(r.Words())
			if r.Exact {
				n = len(ws)
			}
			if n > approved {
				best = r
			}
			approved = max(approved, n)
			granted = granted.Union(r.Widening)
		}
	}
	if !inert[base] {
		a.granted = append(a.granted, granted)
		a.matched = append(a.matched, best)
	}
	if approved < 0 {
		a.askAs(ConcernUncovered, "no allow rule covers %s", shorten(joinWords(ws)))
		if a.suggest == "" {
			a.suggest = SuggestPrefix(ws)
		}
	}
	// What the rule's own words name is approved; everything after them is
	// checked against the escape table.
	for _, f := range c.out {
		if f.at < approved {
			continue
		}
		switch {
		case f.reason != "" && f.opaque:
			a.askOpaqueAs(ConcernOpaque, "%s", f.reason)
		case f.reason != "":
			a.askAs(f.concern, "%s", f.reason)
		case f.relative != "":
			a.relativeTargets = append(a.relativeTargets, f.relative)
		}
	}
}

// widening is what the allow rules give every command of the line: the
// intersection of each command's widening (zero when there is none).
func (a *analysis) widening() Widening {
	if len(a.granted) == 0 || a.opaque {
		return Widening{}
	}
	w := a.granted[0]
	for _, g := range a.granted[1:] {
		w = w.Intersect(g)
	}
	return w
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
			a.askAs(ConcernDeny, "it may expand to a command the rule %q denies", r.String())
		}
	}
	return false
}

// unwrap looks through commands that run another command with the rest of
// their arguments (env, timeout, nice, …). env are the variables a wrapper
// (env NAME=value) sets for the command. ok is false when the wrapper's
// arguments cannot be read and the user was asked instead.
func (a *analysis) unwrap(ws []word) (rest []word, env []string, ok bool) {
	for len(ws) > 0 && ws[0].literal {
		spec, isWrapper := wrappers[filepath.Base(ws[0].text)]
		if !isWrapper {
			return ws, env, true
		}
		name := filepath.Base(ws[0].text)
		ws = ws[1:]
		// Options, and the arguments of those that take one.
		for len(ws) > 0 && strings.HasPrefix(ws[0].text, "-") && ws[0].text != "-" {
			if !ws[0].literal {
				a.askOpaqueAs(ConcernOpaque, "%s has options computed at run time", name)
				return nil, nil, false
			}
			opt := ws[0].text
			ws = ws[1:]
			if opt == "--" {
				break
			}
			o := spec.option(opt, ws)
			if o.why != "" {
				a.askAs(ConcernOpaque, "%s %s %s", name, opt, o.why)
				return nil, nil, false
			}
			if o.hasWrite {
				if r, k := a.checkTarget(o.file, o.literal); r != "" {
					a.askAs(k, "%s %s %s", name, opt, r)
				}
			}
			ws = ws[o.values:]
		}
		if len(ws) > 0 && !ws[0].literal && a.startsUnknown(ws[0].node.Parts) {
			a.askOpaqueAs(ConcernOpaque, "%s has options or a command computed at run time", name)
			return nil, nil, false
		}
		if spec.envAssigns {
			for len(ws) > 0 && strings.Contains(ws[0].text, "=") && !strings.HasPrefix(ws[0].text, "=") {
				if !ws[0].literal {
					a.askAs(ConcernCode, "%s sets a variable computed at run time", name)
					return nil, nil, false
				}
				v := ws[0].text[:strings.IndexByte(ws[0].text, '=')]
				a.setVar(v)
				env = append(env, v)
				ws = ws[1:]
			}
		}
		for i := 0; i < spec.positional && len(ws) > 0; i++ {
			ws = ws[1:]
		}
	}
	return ws, env, true
}

// redirect asks about a write outside the workspace or to a computed target.
func (a *analysis) redirect(r *syntax.Redirect) {
	if r.N != nil && !isDigits(r.N.Value) {
		a.setVar(strings.Trim(r.N.Value, "{}")) // {fd}>file assigns fd
	}
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
	if reason, k := a.checkTarget(w.text, w.literal); reason != "" {
		a.askAs(k, "%s", reason)
	} else if w.literal && !filepath.IsAbs(w.text) && !devSink(w.text) {
		a.relativeTargets = append(a.relativeTargets, w.text)
	}
}

// checkTarget is why writing path must be asked ("" when it may be
// written) and what that is about: a path computed at run time
// (ConcernCode: a sandbox refuses it if it is outside), outside the
// workspace (symlinks resolved), or in .git.
func (a *analysis) checkTarget(path string, literal bool) (string, Concern) {
	if !literal {
		return "writes to a file named at run time", ConcernCode
	}
	if devSink(path) {
		return "", ConcernOther
	}
	if !a.checker.inside(path) {
		return fmt.Sprintf("writes to %s, outside the workspace", path), ConcernOutside
	}
	for _, c := range strings.Split(filepath.ToSlash(filepath.Clean(path)), "/") {
		if strings.EqualFold(c, ".git") {
			return "writes into .git (git's config and hooks can run commands)", ConcernGit
		}
	}
	return "", ConcernOther
}

// devSink: the special files a write to which changes nothing on disk.
func devSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") && isDigits(strings.TrimPrefix(p, "/dev/fd/"))
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
