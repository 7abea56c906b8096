package files

import (
	"bytes"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// The line DFA answers one question per line, "does this line contain a
// match?", which is all a grep needs. It is built lazily from the compiled
// program of Go's regexp/syntax, so the regular-expression semantics are
// exactly Go's, and it scans a whole buffer in one pass at a constant cost
// per byte: no backtracking, no per-line regexp calls, no pathological
// patterns. Lines are the bytes between \n (a \r stays part of the line, as
// in rg without --crlf); ^ and \A match at a line start, $ and \z at a line
// end, and no match ever spans a line break because \n is never fed to the
// automaton.
//
// A dfaProg is immutable and shared by all workers; a lineDFA holds the
// lazily built states and is owned by one worker (it is not safe for
// concurrent use).

const (
	// dfaMaxStates bounds one worker's cache; past it the cache is dropped
	// and rebuilt, so memory stays bounded even for patterns whose DFA
	// would be exponential (the scan then degrades to NFA speed, still linear).
	dfaMaxStates = 4096
	// dfaMaxUniTrans bounds the cached non-ASCII transitions the same way.
	dfaMaxUniTrans = 1 << 17
)

// dfaProg is a compiled pattern ready for line DFAs.
type dfaProg struct {
	prog *syntax.Prog
	// anchored: every match starts at a line start, so a line whose
	// automaton has no live thread after its first characters cannot match.
	anchored bool
	// accel: the few bytes (at most 3) that can start a match. Where the
	// automaton is idle (no thread alive) the scan jumps to the next of
	// them with bytes.IndexByte instead of stepping through every byte.
	accel []byte
}

type stateKind uint8

const (
	kindNormal stateKind = iota
	kindMatch            // sentinel: the line matches
	kindDead             // no match is possible in the rest of this line
	kindIdle             // no thread alive mid-line: skip to an accel byte
)

const (
	flagLineStart uint8 = 1 << iota // the position follows a \n or the buffer start
	flagWordPrev                    // the previous rune is an ASCII word character
)

type dfaState struct {
	next  [utf8.RuneSelf]*dfaState // ASCII transitions; \n leads to the line's verdict
	uni   map[rune]*dfaState       // non-ASCII transitions (invalid UTF-8 is U+FFFD)
	insts []uint32                 // pending instructions, before the empty-width closure
	flags uint8
	kind  stateKind
}

func newDFAProg(re *syntax.Regexp) (*dfaProg, error) {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	p := &dfaProg{prog: prog}
	// A start thread that can reach neither a rune nor a match away from a
	// line start means every match is anchored at the line start.
	d := newLineDFA(p)
	all := syntax.EmptyEndLine | syntax.EmptyEndText | syntax.EmptyWordBoundary | syntax.EmptyNoWordBoundary
	if !d.closure(nil, all) && len(d.list) == 0 {
		p.anchored = true
		return p, nil
	}
	// The first bytes of every rune a match can start with, whatever the
	// context; none when the pattern can match the empty string.
	if !d.closure(nil, all|syntax.EmptyBeginLine|syntax.EmptyBeginText) {
		p.accel = firstBytes(prog, d.list)
	}
	return p, nil
}

// maxAccelBytes and maxAccelRange bound the first-byte analysis.
const (
	maxAccelBytes = 3
	maxAccelRange = 512
)

// firstBytes returns the distinct first UTF-8 bytes of the runes the
// instructions insts accept, or nil when there are more than maxAccelBytes
// or the set is too wide to enumerate.
func firstBytes(prog *syntax.Prog, insts []uint32) []byte {
	var set [256]bool
	n := 0
	add := func(r rune) bool {
		if r == utf8.RuneError {
			return false // invalid UTF-8 decodes to it: any byte could start it
		}
		if r == '\n' {
			return true // never fed to the automaton
		}
		var b [utf8.UTFMax]byte
		utf8.EncodeRune(b[:], r)
		if !set[b[0]] {
			set[b[0]] = true
			n++
		}
		return n <= maxAccelBytes
	}
	for _, pc := range insts {
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1:
		default:
			return nil
		}
		fold := in.Op == syntax.InstRune && syntax.Flags(in.Arg)&syntax.FoldCase != 0
		for i := 0; i+1 < len(in.Rune) || (i == 0 && len(in.Rune) == 1); i += 2 {
			lo, hi := in.Rune[i], in.Rune[i]
			if len(in.Rune) > 1 {
				hi = in.Rune[i+1]
			}
			if hi-lo > maxAccelRange {
				return nil
			}
			for r := lo; r <= hi; r++ {
				if !add(r) {
					return nil
				}
				for f := unicode.SimpleFold(r); fold && f != r; f = unicode.SimpleFold(f) {
					if !add(f) {
						return nil
					}
				}
			}
		}
	}
	var out []byte
	for b := range set {
		if set[b] {
			out = append(out, byte(b))
		}
	}
	return out
}

// lineDFA is one worker's lazily built automaton for a dfaProg.
type lineDFA struct {
	p         *dfaProg
	states    map[string]*dfaState
	nUni      int
	lineStart *dfaState
	matched   *dfaState
	idle      [2]*dfaState // the idle states after a non-word and a word rune

	// scratch
	stack  []uint32
	dense  []uint32
	sparse []uint32
	list   []uint32
	kernel []uint32
	key    []byte
}

func newLineDFA(p *dfaProg) *lineDFA {
	n := len(p.prog.Inst)
	d := &lineDFA{p: p, sparse: make([]uint32, n), dense: make([]uint32, 0, n), matched: &dfaState{kind: kindMatch}}
	d.reset()
	return d
}

// reset drops every cached state; the sentinel stays.
func (d *lineDFA) reset() {
	d.states = make(map[string]*dfaState)
	d.nUni = 0
	d.lineStart = d.intern(nil, flagLineStart)
	d.idle = [2]*dfaState{}
}

// stateAt is the state at position p of buf reached from an idle state
// through bytes that cannot start a match.
func (d *lineDFA) stateAt(buf []byte, from, p int) *dfaState {
	if p == from || buf[p-1] == '\n' {
		return d.lineStart
	}
	w := 0
	if syntax.IsWordChar(rune(buf[p-1])) {
		w = 1
	}
	if d.idle[w] == nil {
		d.idle[w] = d.intern(nil, uint8(w)*flagWordPrev)
	}
	return d.idle[w]
}

func (d *lineDFA) intern(insts []uint32, flags uint8) *dfaState {
	d.key = d.key[:0]
	d.key = append(d.key, flags)
	for _, pc := range insts {
		d.key = binary.AppendUvarint(d.key, uint64(pc))
	}
	if s, ok := d.states[string(d.key)]; ok {
		return s
	}
	if len(d.states) >= dfaMaxStates {
		d.reset()
		return d.intern(insts, flags)
	}
	s := &dfaState{insts: slices.Clone(insts), flags: flags}
	if len(insts) == 0 && flags&flagLineStart == 0 {
		if d.p.anchored {
			s.kind = kindDead
		} else if d.p.accel != nil {
			s.kind = kindIdle
		}
	}
	d.states[string(d.key)] = s
	return s
}

// closure follows the empty transitions allowed by op from insts and from
// the program start (the search is unanchored), leaving the rune
// instructions reached in d.list. It reports whether a match was reached.
func (d *lineDFA) closure(insts []uint32, op syntax.EmptyOp) bool {
	prog := d.p.prog
	d.dense = d.dense[:0]
	d.list = d.list[:0]
	d.stack = append(d.stack[:0], uint32(prog.Start))
	for i := len(insts) - 1; i >= 0; i-- {
		d.stack = append(d.stack, insts[i])
	}
	matched := false
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if j := d.sparse[pc]; int(j) < len(d.dense) && d.dense[j] == pc {
			continue
		}
		d.sparse[pc] = uint32(len(d.dense))
		d.dense = append(d.dense, pc)
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			d.stack = append(d.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^op == 0 {
				d.stack = append(d.stack, in.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		default:
			d.list = append(d.list, pc)
		}
	}
	return matched
}

// emptyOps are the empty-width assertions true between a state's previous
// rune and the next rune r (eol: the line ends here).
func emptyOps(flags uint8, r rune, eol bool) syntax.EmptyOp {
	var op syntax.EmptyOp
	if flags&flagLineStart != 0 {
		op |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if eol {
		op |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if (flags&flagWordPrev != 0) != (!eol && syntax.IsWordChar(r)) {
		op |= syntax.EmptyWordBoundary
	} else {
		op |= syntax.EmptyNoWordBoundary
	}
	return op
}

// transition computes and caches the successor of st on r; \n yields the
// line's verdict: the match sentinel or the next line's start state.
func (d *lineDFA) transition(st *dfaState, r rune) *dfaState {
	var nx *dfaState
	if r == '\n' {
		nx = d.lineStart
		if d.closure(st.insts, emptyOps(st.flags, 0, true)) {
			nx = d.matched
		}
	} else if d.closure(st.insts, emptyOps(st.flags, r, false)) {
		nx = d.matched
	} else {
		prog := d.p.prog
		d.kernel = d.kernel[:0]
		for _, pc := range d.list {
			in := &prog.Inst[pc]
			ok := false
			switch in.Op {
			case syntax.InstRuneAny:
				ok = true
			case syntax.InstRuneAnyNotNL:
				ok = r != '\n'
			default:
				ok = in.MatchRune(r)
			}
			if ok {
				d.kernel = append(d.kernel, in.Out)
			}
		}
		slices.Sort(d.kernel)
		d.kernel = slices.Compact(d.kernel)
		var flags uint8
		if syntax.IsWordChar(r) {
			flags = flagWordPrev
		}
		nx = d.intern(d.kernel, flags)
	}
	if r < utf8.RuneSelf {
		st.next[r] = nx
	} else {
		if d.nUni >= dfaMaxUniTrans {
			d.reset() // nx stays valid; its own table is rebuilt lazily
		}
		if st.uni == nil {
			st.uni = make(map[rune]*dfaState)
		}
		st.uni[r] = nx
		d.nUni++
	}
	return nx
}

// endMatches reports whether a line ending in state st matches.
func (d *lineDFA) endMatches(st *dfaState) bool {
	if st.kind == kindMatch || st.kind == kindDead {
		return st.kind == kindMatch
	}
	nx := st.next['\n']
	if nx == nil {
		nx = d.transition(st, '\n')
	}
	return nx == d.matched
}

// scan calls emit(lineStart, lineEnd) for every matching line of buf[from:],
// in order; lineEnd excludes the \n.
func (d *lineDFA) scan(buf []byte, from int, emit func(ls, le int)) {
	st := d.lineStart
	last := from // no line break between from and the current line start is unaccounted
	i := from
	// Skipping pays only when the accel bytes are rare; after many short
	// skips this buffer is stepped through byte by byte.
	accel, shortSkips := d.p.accel != nil, 0
	var nextAt [maxAccelBytes]int // next position of each accel byte, valid when >= i
	for k := range nextAt {
		nextAt[k] = -1
	}
	for i < len(buf) {
		at := i
		c := buf[i]
		var nx *dfaState
		if c < utf8.RuneSelf {
			nx = st.next[c]
			if nx == nil {
				nx = d.transition(st, rune(c))
			}
			i++
		} else {
			r, w := utf8.DecodeRune(buf[i:])
			nx = st.uni[r]
			if nx == nil {
				nx = d.transition(st, r)
			}
			i += w
		}
		st = nx
		if st.kind == kindNormal {
			continue
		}
		if st.kind == kindIdle {
			if !accel {
				continue
			}
			p := len(buf)
			for k, b := range d.p.accel {
				if nextAt[k] < i {
					j := bytes.IndexByte(buf[i:], b)
					if j < 0 {
						nextAt[k] = len(buf)
					} else {
						nextAt[k] = i + j
					}
				}
				p = min(p, nextAt[k])
			}
			if p == len(buf) {
				return // nothing left can start a match, and an idle line cannot match at its end
			}
			if p-i < 16 {
				if shortSkips++; shortSkips > 64 {
					accel = false
				}
			} else {
				shortSkips = 0
			}
			i, st = p, d.stateAt(buf, from, p)
			continue
		}
		le := at
		if c != '\n' {
			j := bytes.IndexByte(buf[at:], '\n')
			if j < 0 {
				le = len(buf)
			} else {
				le = at + j
			}
		}
		if st.kind == kindMatch {
			ls := bytes.LastIndexByte(buf[last:at], '\n') + 1 + last
			emit(ls, le)
		}
		i, last, st = le+1, le+1, d.lineStart
	}
	if i == len(buf) && len(buf) > from && buf[len(buf)-1] != '\n' && d.endMatches(st) {
		ls := bytes.LastIndexByte(buf[last:], '\n') + 1 + last
		emit(ls, len(buf))
	}
}

// matchLine reports whether one line (without its \n) matches.
func (d *lineDFA) matchLine(line []byte) bool {
	st := d.lineStart
	for i := 0; i < len(line); {
		c := line[i]
		var nx *dfaState
		if c < utf8.RuneSelf {
			nx = st.next[c]
			if nx == nil {
				nx = d.transition(st, rune(c))
			}
			i++
		} else {
			r, w := utf8.DecodeRune(line[i:])
			nx = st.uni[r]
			if nx == nil {
				nx = d.transition(st, r)
			}
			i += w
		}
		st = nx
		if st.kind == kindMatch || st.kind == kindDead {
			return st.kind == kindMatch
		}
	}
	return d.endMatches(st)
}
