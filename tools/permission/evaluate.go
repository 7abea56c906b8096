package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// pureArith reports an arithmetic expression made only of numbers and
// operators: bash evaluates every variable in arithmetic again as an
// expression, and an array subscript in that value (a[$(cmd)]) runs cmd,
// so any name or expansion in it can execute.
func pureArith(x syntax.ArithmExpr) bool {
	switch x := x.(type) {
	case *syntax.Word:
		if len(x.Parts) == 1 {
			if p, ok := x.Parts[0].(*syntax.ParamExp); ok {
				return numericParam(p)
			}
		}
		w := literalWord(x)
		return w.literal && isNumber(w.text)
	case *syntax.BinaryArithm:
		switch x.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
			return false
		}
		return pureArith(x.X) && pureArith(x.Y)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			return false
		}
		return pureArith(x.X)
	case *syntax.ParenArithm:
		return pureArith(x.X)
	}
	return false
}

// numericParam: an expansion that is always a number: $#, $?, $$, $!
// and ${#x}.
func numericParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
		return false
	}
	if p.Length {
		return p.Index == nil || allIndex(p.Index) || pureArith(p.Index)
	}
	switch p.Param.Value {
	case "#", "?", "$", "!":
		return p.Index == nil
	}
	return false
}

// isNumber: an integer constant of bash arithmetic (12, 0x1f, 017, 2#101,
// 36#zz).
func isNumber(s string) bool {
	if b, digits, ok := strings.Cut(s, "#"); ok {
		if !isDigits(b) || digits == "" {
			return false
		}
		for _, r := range digits {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '@' || r == '_') {
				return false
			}
		}
		return true
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if h == "" {
			return false
		}
		for _, r := range h {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				return false
			}
		}
		return true
	}
	return isDigits(s)
}

// isName: a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// isVarRef: a literal variable name, optionally with a constant subscript
// (x, a[3], a[@]) — what -v and -R may test without evaluating anything.
func isVarRef(w word) bool {
	if !w.literal {
		return false
	}
	name, sub, ok := strings.Cut(w.text, "[")
	if !ok {
		return isName(name)
	}
	sub, closed := strings.CutSuffix(sub, "]")
	return closed && isName(name) && (isDigits(sub) || sub == "@" || sub == "*")
}

// allIndex: the [@] or [*] of an array expansion.
func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	l := literalWord(w)
	return l.literal && (l.text == "@" || l.text == "*")
}

// nameTakers are the builtins whose operands (or some options' values) are
// variable names they assign.
var nameTakers = set("read mapfile readarray printf getopts wait unset")

// prepass records, before the walk, the for-loop variables that hold only
// plain words (loopVars) and the names used as arrays (arrays).
func (a *analysis) prepass(f *syntax.File) {
	assigned := map[string]bool{}
	type loop struct {
		name string
		safe bool
		body span
	}
	var loops []loop
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil {
				assigned[n.Name.Value] = true
				if n.Array != nil || n.Index != nil {
					a.arrays[n.Name.Value] = true
				}
			}
		case *syntax.DeclClause:
			arr := false
			for _, as := range n.Args {
				if as.Naked && as.Name == nil {
					if w := literalWord(as.Value); w.literal && strings.HasPrefix(w.text, "-") && strings.ContainsAny(w.text, "aA") {
						arr = true
					}
				}
			}
			for _, as := range n.Args {
				if as.Name != nil {
					assigned[as.Name.Value] = true
					if arr {
						a.arrays[as.Name.Value] = true
					}
				}
			}
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil {
				assigned[n.Param.Value] = true
			}
		case *syntax.CallExpr:
			ws := literalWords(n.Args)
			if len(ws) > 0 && nameTakers[ws[0].text] {
				for _, w := range ws[1:] {
					assigned[w.text] = true
					if ws[0].text != "printf" && ws[0].text != "getopts" {
						a.arrays[w.text] = true
					}
				}
			}
		case *syntax.ForClause:
			it, ok := n.Loop.(*syntax.WordIter)
			if !ok {
				return true
			}
			l := loop{name: it.Name.Value, safe: it.InPos.IsValid(), body: span{n.DoPos, n.DonePos}}
			for _, item := range it.Items {
				w := literalWord(item)
				if !w.literal || w.text == "" || strings.HasPrefix(w.text, "-") || strings.ContainsAny(w.text, " \t\n*?[") {
					l.safe = false
				}
			}
			loops = append(loops, l)
		}
		return true
	})
	bad := map[string]bool{}
	for _, l := range loops {
		if !l.safe || assigned[l.name] {
			bad[l.name] = true
		}
	}
	for _, l := range loops {
		if !bad[l.name] {
			a.loopVars[l.name] = append(a.loopVars[l.name], l.body)
		}
	}
}

// loopWord: p is a plain $name of a for-loop variable over plain words,
// used inside that loop, so it expands to one of those words.
func (a *analysis) loopWord(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
		return false
	}
	for _, s := range a.loopVars[p.Param.Value] {
		if s.from.IsValid() && s.to.IsValid() && p.Pos().After(s.from) && s.to.After(p.Pos()) {
			return true
		}
	}
	return false
}
