package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// literalWords turns a command's words into what the shell passes after
// quote removal. A word with an expansion, a glob or a brace pattern keeps
// its source text and is marked non-literal: no rule word ever equals it.
func literalWords(args []*syntax.Word) []word {
	out := make([]word, len(args))
	for i, a := range args {
		out[i] = literalWord(a)
	}
	return out
}

func literalWord(w *syntax.Word) word {
	if w == nil {
		return word{}
	}
	var b strings.Builder
	literal := true
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if globby(v) || (i == 0 && strings.HasPrefix(v, "~")) {
				literal = false
			}
			b.WriteString(unescape(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				literal = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				literal = false
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					literal = false
					b.WriteString(source(dp))
					continue
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			literal = false
			b.WriteString(source(part))
		}
	}
	return word{text: b.String(), literal: literal, node: w}
}

// globby reports unquoted text the shell expands: * and ?, a bracket
// pattern [..], a brace expansion {a,b} or {1..3}. A lone [ (the test
// command) or {} (find's placeholder) stays literal.
func globby(v string) bool {
	if strings.ContainsAny(v, "*?") {
		return true
	}
	if i := strings.IndexByte(v, '['); i >= 0 && strings.IndexByte(v[i+1:], ']') >= 0 {
		return true
	}
	if i := strings.IndexByte(v, '{'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '}'); j >= 0 {
			in := v[i+1 : i+1+j]
			return strings.Contains(in, ",") || strings.Contains(in, "..") || strings.ContainsAny(in, "{")
		}
	}
	return false
}

// unescape removes the backslashes of an unquoted literal (`g\it` is `git`;
// a backslash-newline disappears).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that escape inside double quotes:
// before $, `, ", \ and newline only.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// source prints a word part back as shell text, for messages.
func source(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "…"
	}
	return b.String()
}

// mayBeOption reports whether a word the shell expands at run time can
// produce an argument that starts with "-" (an option such as --pre=sh) or
// several arguments: an unquoted expansion is split into fields, and a word
// whose first character is not a plain literal can start with anything. A
// variable of a for loop over plain words (none starting with "-") used
// inside that loop stays one of those words.
func (a *analysis) mayBeOption(w word) bool {
	if w.literal || w.node == nil {
		return false
	}
	for _, p := range w.node.Parts {
		if a.addsFields(p) {
			return true
		}
	}
	return a.startsUnknown(w.node.Parts)
}

// addsFields: the part may expand to several fields (unquoted $x or $(…),
// "$@" and "${a[@]}").
func (a *analysis) addsFields(p syntax.WordPart) bool {
	switch p := p.(type) {
	case *syntax.ParamExp:
		return !a.loopWord(p)
	case *syntax.CmdSubst:
		return true
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if pe, ok := q.(*syntax.ParamExp); ok && (pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*") || allIndex(pe.Index) || pe.Names != 0) {
				return true
			}
		}
	}
	return false
}

// startsUnknown: the first character of the expanded word is not known to
// be something other than "-".
func (a *analysis) startsUnknown(parts []syntax.WordPart) bool {
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				return false // a home directory: an absolute path
			}
			v = unescape(v)
			if v == "" {
				continue
			}
			return strings.ContainsRune("-*?[{", rune(v[0]))
		case *syntax.SglQuoted:
			if p.Dollar {
				return true
			}
			if p.Value == "" {
				continue
			}
			return p.Value[0] == '-'
		case *syntax.DblQuoted:
			if p.Dollar {
				return true
			}
			if len(p.Parts) == 0 {
				continue
			}
			if lit, ok := p.Parts[0].(*syntax.Lit); ok {
				v := unescapeDouble(lit.Value)
				if v == "" {
					continue
				}
				return v[0] == '-'
			}
			return a.startsUnknown(p.Parts)
		case *syntax.ParamExp:
			return !a.loopWord(p)
		case *syntax.ProcSubst:
			return false // /dev/fd/N
		default:
			return true
		}
	}
	return true
}

// SuggestPrefix proposes the words an "always" rule should hold for a
// command: its name, plus the subcommand for tools that have them
// (`go test ./... -run X` → `go test`; `npm run lint` → `npm run lint`;
// `ls -la` → `ls`; `echo run` → `echo`).
func SuggestPrefix(ws []word) string {
	if len(ws) == 0 || !ws[0].literal {
		return ""
	}
	out := []string{ws[0].text}
	if len(ws) > 1 && subcommandTools[ws[0].text] && isSubcommand(ws[1]) {
		out = append(out, ws[1].text)
		if runners[ws[0].text] && ws[1].text == "run" && len(ws) > 2 && isSubcommand(ws[2]) {
			out = append(out, ws[2].text)
		}
	}
	return strings.Join(out, " ")
}

// SuggestFor parses a command line and proposes the prefix for its first
// simple command (for the approval picker when no rule was consulted).
func SuggestFor(line string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return ""
	}
	var out string
	syntax.Walk(f, func(n syntax.Node) bool {
		if out != "" {
			return false
		}
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			a := newAnalysis(Checker{}, nil)
			if ws, _, ok := a.unwrap(literalWords(c.Args)); ok {
				out = SuggestPrefix(ws)
			}
		}
		return out == ""
	})
	return out
}

// subcommandTools take a subcommand as their first word (git status, go
// test); a rule for them should name it.
var subcommandTools = map[string]bool{
	"go": true, "git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "deno": true,
	"cargo": true, "rustup": true, "make": true, "just": true, "docker": true, "podman": true,
	"kubectl": true, "helm": true, "gh": true, "pip": true, "pip3": true, "uv": true, "poetry": true,
	"dotnet": true, "mvn": true, "gradle": true, "terraform": true, "systemctl": true, "apt": true,
	"apt-get": true, "brew": true, "nix": true, "bundle": true, "rake": true, "mix": true, "stack": true,
	"cabal": true, "zig": true, "swift": true, "composer": true, "conda": true, "tox": true,
	"nox": true, "dune": true, "opam": true, "ninja": true, "cmake": true, "meson": true, "bazel": true,
}

// runners take a script name after `run` (npm run lint).
var runners = map[string]bool{"npm": true, "pnpm": true, "yarn": true, "bun": true, "deno": true, "cargo": true, "uv": true, "poetry": true}

func isSubcommand(w word) bool {
	if !w.literal || w.text == "" {
		return false
	}
	for _, r := range w.text {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return w.text[0] != '-'
}
