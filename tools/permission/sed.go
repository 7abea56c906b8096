package permission

import "strings"

// sedScript is what a GNU sed script does beyond editing text.
type sedScript struct {
	// ok is false when the script is not read to its end: the caller asks.
	ok bool
	// exec: the e command or the e flag of s runs a shell command.
	exec bool
	// writes are the files of w, W and the w flag of s.
	writes []string
}

// readSedScript reads a GNU sed script command by command (addresses,
// blocks, a/i/c text, labels, s and y with any delimiter, bracket
// expressions in regular expressions). Whatever it does not recognize
// ends the reading with ok false, so a script it cannot read asks instead
// of hiding an e command.
func readSedScript(s string) sedScript {
	r := &sedReader{s: s}
	return r.read()
}

type sedReader struct {
	s   string
	i   int
	out sedScript
}

func (r *sedReader) eof() bool  { return r.i >= len(r.s) }
func (r *sedReader) peek() byte { return r.s[r.i] }

func (r *sedReader) skipSpace() {
	for !r.eof() && (r.peek() == ' ' || r.peek() == '\t') {
		r.i++
	}
}

// restOfLine returns the text up to the next newline (or the end) and
// stops before it.
func (r *sedReader) restOfLine() string {
	j := strings.IndexByte(r.s[r.i:], '\n')
	if j < 0 {
		j = len(r.s) - r.i
	}
	t := r.s[r.i : r.i+j]
	r.i += j
	return t
}

func (r *sedReader) read() sedScript {
	depth := 0
	for {
		// Separators between commands.
		for !r.eof() && strings.IndexByte(" \t\n;", r.peek()) >= 0 {
			r.i++
		}
		if r.eof() {
			r.out.ok = depth == 0
			return r.out
		}
		if r.peek() == '#' {
			r.restOfLine()
			continue
		}
		if r.peek() == '}' {
			if depth == 0 {
				return r.out
			}
			depth--
			r.i++
			continue
		}
		if !r.address() {
			return r.out
		}
		r.skipSpace()
		if !r.eof() && r.peek() == ',' {
			r.i++
			r.skipSpace()
			if !r.eof() && (r.peek() == '+' || r.peek() == '~') {
				r.i++
				if !r.digits() {
					return r.out
				}
			} else if !r.address() {
				return r.out
			}
		}
		r.skipSpace()
		for !r.eof() && r.peek() == '!' {
			r.i++
			r.skipSpace()
		}
		if r.eof() {
			return r.out
		}
		cmd := r.peek()
		r.i++
		switch cmd {
		case '{':
			depth++
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			r.skipSpace()
			r.digits()
		case 'a', 'i', 'c':
			r.text()
		case ':':
			r.skipSpace()
			if l, ok := r.label(); !ok || l == "" {
				return r.out
			}
		case 'b', 't', 'T', 'v':
			r.skipSpace()
			if _, ok := r.label(); !ok {
				return r.out
			}
		case 'r', 'R':
			r.skipSpace()
			r.restOfLine()
		case 'w', 'W':
			r.skipSpace()
			if f := r.restOfLine(); f != "" {
				r.out.writes = append(r.out.writes, f)
			} else {
				return r.out
			}
		case 'e':
			r.out.exec = true
			r.restOfLine()
		case 's':
			if !r.substitute() {
				return r.out
			}
		case 'y':
			if r.eof() {
				return r.out
			}
			d := r.peek()
			r.i++
			// y/source/dest/: two parts in a row.
			if !r.part(d, false) {
				return r.out
			}
			if !r.part(d, false) {
				return r.out
			}
		default:
			return r.out
		}
		// After a command: spaces, then ; } # or a newline.
		r.skipSpace()
		if !r.eof() && strings.IndexByte(";\n}#", r.peek()) < 0 {
			return r.out
		}
	}
}

func (r *sedReader) digits() bool {
	j := r.i
	for !r.eof() && r.peek() >= '0' && r.peek() <= '9' {
		r.i++
	}
	return r.i > j
}

// address reads an optional address: a line number (first~step), $,
// /regex/ or \cregexc with I and M flags.
func (r *sedReader) address() bool {
	if r.eof() {
		return true
	}
	switch c := r.peek(); {
	case c >= '0' && c <= '9':
		r.digits()
		if !r.eof() && r.peek() == '~' {
			r.i++
			return r.digits()
		}
	case c == '$':
		r.i++
	case c == '/' || c == '\\':
		if c == '\\' {
			r.i++
			if r.eof() || r.peek() == '\n' || r.peek() == '\\' {
				return false
			}
		}
		d := r.peek()
		r.i++
		if !r.part(d, true) {
			return false
		}
		for !r.eof() && (r.peek() == 'I' || r.peek() == 'M') {
			r.i++
		}
	}
	return true
}

// part reads up to the unescaped delimiter d (and past it); regex says
// whether bracket expressions are read (they may hold d).
func (r *sedReader) part(d byte, regex bool) bool {
	if d == '\n' || d == '\\' {
		return false
	}
	for !r.eof() {
		c := r.peek()
		switch {
		case c == '\\':
			r.i += 2
		case c == d:
			r.i++
			return true
		case c == '\n' && !regex:
			return false // an unescaped newline ends a replacement: sed rejects it
		case c == '[' && regex:
			if !r.bracket() {
				return false
			}
		default:
			r.i++
		}
	}
	return false
}

// bracket reads a bracket expression: [^]...], [[:alpha:]]. A backslash in
// it is read differently by sed implementations, so it is not accepted.
func (r *sedReader) bracket() bool {
	r.i++ // [
	if !r.eof() && r.peek() == '^' {
		r.i++
	}
	if !r.eof() && r.peek() == ']' {
		r.i++
	}
	for !r.eof() {
		c := r.peek()
		switch {
		case c == ']':
			r.i++
			return true
		case c == '\\' || c == '\n':
			return false
		case c == '[' && r.i+1 < len(r.s) && strings.IndexByte(":.=", r.s[r.i+1]) >= 0:
			end := "" + string(r.s[r.i+1]) + "]"
			j := strings.Index(r.s[r.i+2:], end)
			if j < 0 {
				return false
			}
			r.i += 2 + j + 2
		default:
			r.i++
		}
	}
	return false
}

// substitute reads s/regex/replacement/flags.
func (r *sedReader) substitute() bool {
	if r.eof() {
		return false
	}
	d := r.peek()
	r.i++
	if !r.part(d, true) || !r.part(d, false) {
		return false
	}
	for !r.eof() {
		switch c := r.peek(); {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			r.i++
		case c == 'e':
			r.out.exec = true
			r.i++
		case c == 'w':
			r.i++
			r.skipSpace()
			f := r.restOfLine()
			if f == "" {
				return false
			}
			r.out.writes = append(r.out.writes, f)
			return true
		default:
			return true
		}
	}
	return true
}

// text skips the text of a, i and c: a\ then lines, or the rest of the
// line (GNU), with backslash-newline continuing it.
func (r *sedReader) text() {
	r.skipSpace()
	if !r.eof() && r.peek() == '\\' {
		r.i++
		if !r.eof() && r.peek() == '\n' {
			r.i++
		}
	}
	for !r.eof() {
		c := r.peek()
		if c == '\n' {
			return
		}
		if c == '\\' {
			r.i++
		}
		r.i++
	}
}

// label reads a label up to ; or a newline. sed versions disagree on
// whether a blank ends it (b x  w file), so a label with a blank inside is
// not accepted (ok false).
func (r *sedReader) label() (string, bool) {
	j := r.i
	for !r.eof() && r.peek() != ';' && r.peek() != '\n' {
		r.i++
	}
	l := strings.TrimSpace(r.s[j:r.i])
	return l, !strings.ContainsAny(l, " \t")
}
