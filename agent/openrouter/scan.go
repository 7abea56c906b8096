package openrouter

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// chunkFields are the parts of one chunk the accumulator reads, each the raw
// JSON value as a sub-slice of the payload (strings with their quotes), nil
// when absent.
type chunkFields struct {
	id, error, usage []byte
	// Of choices[0].
	delta, finish []byte
	// Of choices[0].delta.
	content, reasoning, reasoningContent, details, toolCalls []byte
}

// envelope remembers the bytes a stream's chunks repeat before their
// "choices" key (`{"id":"gen-…","provider":…,"created":…,`): a chunk that
// starts with the same bytes is read from its "choices" on, since parsing
// them again would find the same keys and values. Only an envelope of keys
// the accumulator does not read (besides the id, which it reads once) is
// remembered.
type envelope struct {
	prefix []byte
}

// scanChunk reads a chunk's object in one pass, without allocating: the
// top-level keys, the first choice and its delta. It reports false for
// anything it does not read with certainty (a payload that is not an
// object, a key written with escapes, a key given twice, bytes it cannot
// parse); the caller then reads the chunk with gjson, as before. With env
// it skips the envelope the chunk shares with the one before (then f.id is
// nil: the id was read from the first).
//
// Most chunks are one small delta in an envelope of a few hundred bytes; a
// general parser looked up by path (gjson) costs about twice what this walk
// does, and allocates a copy of what it returns.
func scanChunk(p []byte, f *chunkFields, env *envelope) bool {
	*f = chunkFields{}
	sc := scanner{p: p}
	// plain: the keys so far are ones an envelope may hold; choicesAt is
	// where the "choices" key starts (-1: not met yet).
	plain, choicesAt := true, -1
	members := func(key []byte) bool {
		switch string(key) {
		case "id":
			return sc.rawOnce(&f.id)
		case "error":
			plain = false
			return sc.rawOnce(&f.error)
		case "usage":
			plain = false
			return sc.rawOnce(&f.usage)
		case "choices":
			if choicesAt >= 0 {
				return false // given twice: for gjson to read
			}
			choicesAt = sc.keyAt
			if !plain {
				choicesAt = 0 // no envelope to remember
			}
			return sc.choices(f)
		}
		return sc.skip()
	}
	var ok bool
	if env != nil && len(env.prefix) > 0 && bytes.HasPrefix(p, env.prefix) {
		sc.i = len(env.prefix)
		ok = sc.members(members)
	} else {
		ok = sc.object(members)
		if ok && env != nil && choicesAt > 0 && sc.end() {
			env.prefix = append(env.prefix[:0], p[:choicesAt]...)
		}
	}
	return ok && sc.end()
}

// scanner reads JSON from p[i:].
type scanner struct {
	p []byte
	i int
	// keyAt is where the key being read starts.
	keyAt int
}

// choices reads the choices array: the first element's delta and finish
// reason, the others skipped.
func (s *scanner) choices(f *chunkFields) bool {
	if s.i >= len(s.p) || s.p[s.i] != '[' {
		// null: no choice; anything else is for gjson.
		return s.literal("null")
	}
	s.i++
	s.space()
	if s.i < len(s.p) && s.p[s.i] == ']' {
		s.i++
		return true
	}
	if s.i >= len(s.p) || s.p[s.i] != '{' {
		return false
	}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "delta":
			if f.delta != nil {
				return false
			}
			start := s.i
			if s.i < len(s.p) && s.p[s.i] == '{' {
				if !s.object(func(key []byte) bool {
					switch string(key) {
					case "content":
						return s.rawOnce(&f.content)
					case "reasoning":
						return s.rawOnce(&f.reasoning)
					case "reasoning_content":
						return s.rawOnce(&f.reasoningContent)
					case "reasoning_details":
						return s.rawOnce(&f.details)
					case "tool_calls":
						return s.rawOnce(&f.toolCalls)
					}
					return s.skip()
				}) {
					return false
				}
			} else if !s.skip() {
				return false
			}
			f.delta = s.p[start:s.i]
			return true
		case "finish_reason":
			return s.rawOnce(&f.finish)
		}
		return s.skip()
	})
	if !ok {
		return false
	}
	// The other choices (Fido asks for one).
	for {
		more, ok := s.next(']')
		if !ok || !more {
			return ok
		}
		if !s.skip() {
			return false
		}
	}
}

// object reads an object, calling fn for each key (its bytes between the
// quotes) with s at the value, which fn must read; it stops and reports
// false at the first problem or when fn does.
func (s *scanner) object(fn func(key []byte) bool) bool {
	s.space()
	if s.i >= len(s.p) || s.p[s.i] != '{' {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.p) && s.p[s.i] == '}' {
		s.i++
		return true
	}
	return s.members(fn)
}

// members reads an object's members from a key on, to the closing brace.
func (s *scanner) members(fn func(key []byte) bool) bool {
	for {
		if s.i >= len(s.p) || s.p[s.i] != '"' {
			return false
		}
		start := s.i
		s.keyAt = start
		if !s.str() {
			return false
		}
		key := s.p[start+1 : s.i-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		s.space()
		if s.i >= len(s.p) || s.p[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !fn(key) {
			return false
		}
		if more, ok := s.next('}'); !ok || !more {
			return ok
		}
	}
}

// next reads what follows a member or an element: a comma (more follow)
// or the closing bracket.
func (s *scanner) next(closer byte) (more, ok bool) {
	s.space()
	switch {
	case s.i >= len(s.p):
		return false, false
	case s.p[s.i] == ',':
		s.i++
		s.space()
		return true, true
	case s.p[s.i] == closer:
		s.i++
		return false, true
	}
	return false, false
}

// rawOnce reads a value into *dst; a key met twice makes the chunk one for
// gjson, which decides which of the two counts.
func (s *scanner) rawOnce(dst *[]byte) bool {
	if *dst != nil {
		return false
	}
	start := s.i
	if !s.skip() {
		return false
	}
	*dst = s.p[start:s.i]
	return true
}

// end reports that only white space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.p)
}

func (s *scanner) space() {
	for s.i < len(s.p) && isJSONSpace(s.p[s.i]) {
		s.i++
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// str reads the string that starts at p[i] (a quote).
func (s *scanner) str() bool {
	p := s.p
	for i := s.i + 1; i < len(p); i++ {
		switch p[i] {
		case '"':
			s.i = i + 1
			return true
		case '\\':
			i++
		}
	}
	return false
}

func (s *scanner) literal(word string) bool {
	if !bytes.HasPrefix(s.p[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// skip reads a value. It checks the brackets and strings that delimit it,
// not the grammar inside: what it returns is read again by gjson or as a
// string.
func (s *scanner) skip() bool {
	p := s.p
	if s.i >= len(p) {
		return false
	}
	switch p[s.i] {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(p) {
			switch p[s.i] {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	// A number.
	start := s.i
	for s.i < len(p) && ('0' <= p[s.i] && p[s.i] <= '9' || p[s.i] == '-' || p[s.i] == '+' || p[s.i] == '.' || p[s.i] == 'e' || p[s.i] == 'E') {
		s.i++
	}
	return s.i > start
}

// isString reports whether a raw value is a JSON string.
func isString(v []byte) bool { return len(v) >= 2 && v[0] == '"' }

// isNull reports whether a raw value is absent or null.
func isNull(v []byte) bool { return v == nil || string(v) == "null" }

// appendString appends the text of the JSON string v (with its quotes) to
// dst, escapes decoded as encoding/json decodes them (a lone surrogate
// becomes U+FFFD). ok is false for an escape JSON does not allow.
func appendString(dst, v []byte) ([]byte, bool) {
	s := v[1 : len(v)-1]
	for len(s) > 0 {
		j := bytes.IndexByte(s, '\\')
		if j < 0 {
			return append(dst, s...), true
		}
		dst = append(dst, s[:j]...)
		s = s[j:]
		if len(s) < 2 {
			return dst, false
		}
		switch c := s[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[2:])
			if !ok {
				return dst, false
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2, ok = hex4(s[2:])
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					s = s[6:]
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		s = s[2:]
	}
	return dst, true
}

// validEscapes reports whether appendString decodes the JSON string v.
func validEscapes(v []byte) bool {
	s := v[1 : len(v)-1]
	for {
		j := bytes.IndexByte(s, '\\')
		if j < 0 {
			return true
		}
		s = s[j:]
		if len(s) < 2 {
			return false
		}
		switch s[1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s = s[2:]
		case 'u':
			if _, ok := hex4(s[2:]); !ok {
				return false
			}
			s = s[6:]
		default:
			return false
		}
	}
}

// hex4 reads four hex digits.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
