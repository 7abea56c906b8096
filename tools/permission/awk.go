package permission

import "strings"

// awkProgram is what an awk program does beyond reading and printing.
type awkProgram struct {
	// ok is false when the program could not be read (an unterminated
	// string or regular expression): the caller asks.
	ok bool
	// runs: system(), a pipe to or from a command (| and |&), or gawk's @
	// (indirect calls, @load, @include).
	runs bool
	// writes are the files print and printf redirect to (> and >>).
	writes []string
	// computedWrite: a print redirects to a file named by an expression.
	computedWrite bool
}

type awkToken struct {
	kind byte // 'i' identifier, 'n' number, 's' string, 'r' regex, 'p' punctuation, '\n'
	text string
}

// readAwkProgram reads an awk program token by token. The word system
// anywhere (even in a string) counts as running a command: the reading
// never depends on telling a regular expression from a division for that.
func readAwkProgram(src string) awkProgram {
	out := awkProgram{runs: strings.Contains(src, "system")}
	toks, ok := awkTokens(src)
	if !ok {
		return out
	}
	out.ok = true
	for i, t := range toks {
		switch {
		case t.kind == 'p' && (t.text == "|" || t.text == "|&" || t.text == "@"):
			out.runs = true
		case t.kind == 'i' && (t.text == "print" || t.text == "printf"):
			out.redirect(toks[i+1:])
		}
	}
	return out
}

// redirect reads one print statement (toks after print) for > and >>.
func (out *awkProgram) redirect(toks []awkToken) {
	depth := 0
	for i, t := range toks {
		if t.kind == '\n' || t.kind == 'p' && (t.text == ";" || t.text == "}" && depth == 0) {
			return
		}
		if t.kind != 'p' {
			continue
		}
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ">", ">>":
			if depth != 0 {
				continue
			}
			if i+1 < len(toks) && toks[i+1].kind == 's' && awkStatementEnd(toks[i+2:]) {
				out.writes = append(out.writes, toks[i+1].text)
			} else {
				out.computedWrite = true
			}
			return
		}
	}
}

func awkStatementEnd(toks []awkToken) bool {
	if len(toks) == 0 {
		return true
	}
	t := toks[0]
	return t.kind == '\n' || t.kind == 'p' && (t.text == ";" || t.text == "}")
}

// awkRegexAfter are the identifiers after which / starts a regular
// expression rather than a division.
var awkRegexAfter = set("print printf return case in do else getline")

func awkTokens(s string) ([]awkToken, bool) {
	var toks []awkToken
	operand := func() bool {
		if len(toks) == 0 {
			return false
		}
		t := toks[len(toks)-1]
		switch t.kind {
		case 'i':
			return !awkRegexAfter[t.text]
		case 'n', 's', 'r':
			return true
		case 'p':
			return t.text == ")" || t.text == "]" || t.text == "++" || t.text == "--" || t.text == "$"
		}
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
		case c == '\n':
			toks = append(toks, awkToken{kind: '\n'})
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"':
			var b strings.Builder
			i++
			for {
				if i >= len(s) || s[i] == '\n' {
					return nil, false
				}
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i])
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '"' {
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			toks = append(toks, awkToken{kind: 's', text: b.String()})
		case c == '/' && !operand():
			i++
			for {
				if i >= len(s) || s[i] == '\n' {
					return nil, false
				}
				if s[i] == '\\' {
					i += 2
					continue
				}
				if s[i] == '[' {
					j := i + 1
					if j < len(s) && s[j] == '^' {
						j++
					}
					if j < len(s) && s[j] == ']' {
						j++
					}
					for j < len(s) && s[j] != ']' && s[j] != '\n' {
						if s[j] == '\\' {
							j++
						}
						j++
					}
					if j >= len(s) || s[j] != ']' {
						return nil, false
					}
					i = j + 1
					continue
				}
				if s[i] == '/' {
					i++
					break
				}
				i++
			}
			toks = append(toks, awkToken{kind: 'r'})
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			toks = append(toks, awkToken{kind: 'i', text: s[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == 'x' || s[j] == 'X' ||
				s[j] >= 'a' && s[j] <= 'f' || s[j] >= 'A' && s[j] <= 'F') {
				j++
			}
			toks = append(toks, awkToken{kind: 'n', text: s[i:j]})
			i = j
		default:
			op := string(c)
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case ">>", ">=", "<=", "==", "!=", "&&", "||", "|&", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "**", "!~":
					op = two
				}
			}
			toks = append(toks, awkToken{kind: 'p', text: op})
			i += len(op)
		}
	}
	return toks, true
}
