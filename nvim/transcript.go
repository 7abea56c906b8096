package nvim

import (
	"strings"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools/secret"
	"github.com/fido-nvim/fido/tools/text"
)

// Highlight groups of transcript lines.
const (
	groupUser      = "FidoUser"
	groupReasoning = "FidoReasoning"
	groupTool      = "FidoTool"
	groupError     = "FidoError"
	groupNotice    = "FidoNotice"
	groupHeader    = "FidoHeader"
)

// MaxEntries is how many transcript entries the buffer keeps; older ones are
// dropped from the buffer (never from the conversation).
const MaxEntries = 1000

// entryKind says what a transcript entry holds; streamed kinds grow until
// something else is appended.
type entryKind int

const (
	kindHeader entryKind = iota
	kindUser
	kindReasoning
	kindAnswer
	kindTool
	kindError
	kindNotice
)

type line struct {
	text  string
	group string
}

// TranscriptOps is one flush of transcript changes, applied by Lua in order:
// delete the first Trim lines; replace each Set row in place; extend the
// Append row; replace the rows from From to the end with Lines (From < 0: no
// tail change). Rows count from 0 in the buffer as it is after the trim.
type TranscriptOps struct {
	// Have is how many lines the ops expect the buffer to hold. Lua applies
	// nothing when it holds something else (the user wiped or unloaded the
	// buffer) and asks for a Resync instead.
	Have int       `msgpack:"have"`
	Trim int       `msgpack:"trim"`
	Set  []RowLine `msgpack:"set"`
	// Append, when not nil, adds text to the end of Lua's last row: the
	// line streaming into it grew. A flush then sends what is new rather
	// than the whole line, which a one-line answer grows to 100 KB.
	Append *RowAppend `msgpack:"append"`
	From   int        `msgpack:"from"`
	Lines  []string   `msgpack:"lines"`
	// Groups holds the highlight group of each of Lines ("" for none).
	Groups []string `msgpack:"groups"`
}

// RowAppend is text added to the end of a row: Col is the row's length in
// bytes before it, Group the row's highlight group over its new whole length.
type RowAppend struct {
	Row   int    `msgpack:"row"`
	Col   int    `msgpack:"col"`
	Text  string `msgpack:"text"`
	Group string `msgpack:"group"`
}

// RowLine is one line replaced in place.
type RowLine struct {
	Row   int    `msgpack:"row"`
	Text  string `msgpack:"text"`
	Group string `msgpack:"group"`
}

// Transcript is the model of the transcript buffer: the lines Fido wrote,
// grouped into entries, and what changed since the last flush. Lines have
// absolute ids (base is the id of lines[0]) so trimming never invalidates
// a remembered tool-call line. Not safe for concurrent use (UI guards it).
type Transcript struct {
	lines   []line
	base    int   // absolute id of lines[0]
	entries []int // absolute id of each entry's first line, oldest first
	kind    entryKind
	open    bool // the last entry is a streamed one that may still grow
	header  bool // the next assistant output needs a "## Fido" header
	tools   map[string]int

	// What Lua's buffer holds: absolute ids [syncBase, syncEnd).
	syncBase, syncEnd int
	dirtyFrom         int          // first absolute id of the tail to resend
	dirtyRows         map[int]bool // rows before dirtyFrom changed in place
	max               int

	// What Lua's row of absolute id sentID holds (redacted) and its group,
	// when the last flush sent or kept it as Lua's last row (else sentID
	// is -1): a later flush appends to it when it is still a prefix.
	sent      string
	sentGroup string
	sentID    int

	// grow backs the text of the streamed last line, so appending a delta
	// is amortized O(len(delta)) instead of copying the whole line: a
	// minified file streamed as one 100 KB line made the host spend 0.6 s
	// of CPU on string copies. A Builder only appends, so the strings it
	// returned earlier never change. growID is the absolute id of that line.
	grow   strings.Builder
	growID int
}

// NewTranscript returns an empty transcript keeping max entries (≤ 0: MaxEntries).
func NewTranscript(max int) *Transcript {
	if max <= 0 {
		max = MaxEntries
	}
	return &Transcript{header: true, tools: map[string]int{}, dirtyRows: map[int]bool{}, max: max, sentID: -1}
}

func (t *Transcript) end() int { return t.base + len(t.lines) }

// Len is the number of lines the buffer holds after the next flush.
func (t *Transcript) Len() int { return len(t.lines) }

// Entries is the number of entries kept.
func (t *Transcript) Entries() int { return len(t.entries) }

// Lines returns the model's text lines (what the buffer shows once flushed).
func (t *Transcript) Lines() []string {
	out := make([]string, len(t.lines))
	for i, l := range t.lines {
		out[i] = l.text
	}
	return out
}

// Dirty reports whether a flush has something to send.
func (t *Transcript) Dirty() bool {
	return t.dirtyFrom < t.end() || len(t.dirtyRows) > 0 || t.base > t.syncBase || t.end() != t.syncEnd
}

func (t *Transcript) touch(id int) {
	if id < t.dirtyFrom {
		t.dirtyFrom = id
	}
}

// newEntry starts an entry whose first lines are ls.
func (t *Transcript) newEntry(kind entryKind, open bool, ls ...line) {
	t.entries = append(t.entries, t.end())
	t.touch(t.end())
	t.lines = append(t.lines, ls...)
	t.kind, t.open = kind, open
	t.trim()
}

// trim drops the oldest entries beyond max.
func (t *Transcript) trim() {
	if len(t.entries) <= t.max {
		return
	}
	drop := len(t.entries) - t.max
	newBase := t.entries[drop]
	t.entries = append(t.entries[:0], t.entries[drop:]...)
	// The kept lines are resliced, not copied: a full transcript of tens
	// of thousands of lines was copied whole for every new entry. They are
	// copied (and the dropped ones freed) once as many lines were dropped
	// as are kept, or when append grows the slice.
	kept := t.lines[newBase-t.base:]
	if dropped := cap(t.lines) - cap(kept); dropped > len(kept) {
		kept = append([]line(nil), kept...)
	}
	t.lines = kept
	t.base = newBase
	for id, row := range t.tools {
		if row < newBase {
			delete(t.tools, id)
		}
	}
	for row := range t.dirtyRows {
		if row < newBase {
			delete(t.dirtyRows, row)
		}
	}
}

// MaxRowBytes is the longest row the transcript buffer holds: a longer
// line (minified code, a base64 blob streamed as one line) continues on the
// next rows. Neovim's cost of a write near a line, and of every redraw of
// it with 'wrap' and 'linebreak' (the transcript window's), grows with the
// line's length: 4 KB appended to a 512 KB line took 58 ms on 0.10.4 and
// 0.12.4 (12 ms on 0.7.2), to an 8 KB one 1.3 ms (cmd/renderbench -only
// sizes). The conversation keeps the line whole; only the buffer shows it
// in rows.
const MaxRowBytes = 8 << 10

// rowCut is where a line longer than MaxRowBytes ends its first row: after
// the last space in the row's last 256 bytes when there is one, else at
// the limit (between two characters); never inside a registered key, so
// redacting each row still hides it. 0 when the line cannot be cut yet.
func rowCut(s string) int {
	i := MaxRowBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if k := strings.LastIndexByte(s[i-min(i, 256):i], ' '); k >= 0 {
		i = i - min(i, 256) + k + 1
	}
	return secret.SafeCut(s, i)
}

// rows cuts l into rows of at most MaxRowBytes (see rowCut).
func rows(l line) []line {
	var out []line
	for len(l.text) > MaxRowBytes {
		i := rowCut(l.text)
		if i <= 0 {
			break
		}
		out = append(out, line{text: l.text[:i], group: l.group})
		l.text = l.text[i:]
	}
	return append(out, l)
}

func splitLines(s string, group string) []line {
	parts := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	out := make([]line, 0, len(parts))
	for _, p := range parts {
		if len(p) > MaxRowBytes {
			out = append(out, rows(line{text: p, group: group})...)
		} else {
			out = append(out, line{text: p, group: group})
		}
	}
	return out
}

// separate starts a block with an empty line unless the buffer is empty.
func (t *Transcript) separate() []line {
	if len(t.lines) == 0 && t.base == 0 {
		return nil
	}
	return []line{{}}
}

// User starts a turn: "## You" and the user's text.
func (t *Transcript) User(text string) {
	t.newEntry(kindHeader, false, append(t.separate(), line{"## You", groupUser})...)
	t.newEntry(kindUser, false, splitLines(text, groupUser)...)
	t.header = true
}

func (t *Transcript) assistantHeader() {
	if t.header {
		t.header = false
		t.newEntry(kindHeader, false, append(t.separate(), line{"## Fido", groupHeader})...)
	}
}

// stream appends delta to the open entry of kind, starting one if needed.
func (t *Transcript) stream(kind entryKind, group, delta string) {
	if delta == "" {
		return
	}
	t.assistantHeader()
	if !(t.open && t.kind == kind) {
		t.newEntry(kind, true, line{group: group})
	}
	last := len(t.lines) - 1
	t.touch(t.base + last)
	if strings.IndexByte(delta, '\n') < 0 { // most deltas: a piece of one line
		t.lines[last].text = t.appendLast(last, delta)
		t.cutLast()
		return
	}
	parts := splitLines(delta, group)
	t.lines[last].text = t.appendLast(last, parts[0].text)
	t.cutLast()
	t.lines = append(t.lines, parts[1:]...)
}

// cutLast continues the streamed last line on new rows once it is longer
// than MaxRowBytes.
func (t *Transcript) cutLast() {
	last := len(t.lines) - 1
	if len(t.lines[last].text) <= MaxRowBytes {
		return
	}
	rs := rows(t.lines[last])
	t.lines = append(t.lines[:last], rs...)
}

// minGrow is the least room a streamed line starts with: a typical line of
// prose fits after one doubling.
const minGrow = 64

// appendLast returns lines[last].text+s, appending to the grow builder while
// the line still holds what the builder built (the comparison is O(1) then:
// the same bytes at the same address) and starting a new builder otherwise.
func (t *Transcript) appendLast(last int, s string) string {
	if s == "" {
		return t.lines[last].text
	}
	cur := t.lines[last].text
	if id := t.base + last; id != t.growID || t.grow.Len() == 0 || cur != t.grow.String() {
		t.grow = strings.Builder{}
		t.grow.Grow(max(2*(len(cur)+len(s)), minGrow))
		t.grow.WriteString(cur)
		t.growID = id
	}
	t.grow.WriteString(s)
	return t.grow.String()
}

// Reasoning streams reasoning text (dimmed).
func (t *Transcript) Reasoning(delta string) { t.stream(kindReasoning, groupReasoning, delta) }

// Content streams answer text.
func (t *Transcript) Content(delta string) { t.stream(kindAnswer, "", delta) }

// ToolCall adds "● name summary"; ToolResult with the same id completes it.
func (t *Transcript) ToolCall(id, name, summary string) {
	t.assistantHeader()
	t.newEntry(kindTool, false, line{"● " + text.Collapse(name+" "+summary), groupTool})
	t.tools[id] = t.end() - 1
}

// ToolResult completes the call's line with " … ✓ summary" (✗ and FidoError
// when it failed); a call no longer in the buffer gets a line of its own.
func (t *Transcript) ToolResult(id, name, summary string, isError bool) {
	mark, group := "✓", groupTool
	if isError {
		mark, group = "✗", groupError
	}
	suffix := " … " + mark
	if s := text.Collapse(summary); s != "" {
		suffix += " " + s
	}
	row, ok := t.tools[id]
	delete(t.tools, id)
	if !ok || row < t.base {
		t.assistantHeader()
		t.newEntry(kindTool, false, line{"● " + text.Collapse(name) + suffix, group})
		return
	}
	l := &t.lines[row-t.base]
	l.text += suffix
	l.group = group
	if row < t.dirtyFrom {
		t.dirtyRows[row] = true
	}
}

// ToolNote appends note to the line of call id while the call runs (e.g.
// where its full text is: ":FidoShow <id>"); nothing when the line is gone.
func (t *Transcript) ToolNote(id, note string) {
	row, ok := t.tools[id]
	if !ok || row < t.base {
		return
	}
	l := &t.lines[row-t.base]
	l.text += " · " + text.Collapse(note)
	if row < t.dirtyFrom {
		t.dirtyRows[row] = true
	}
}

// Error adds one FidoError entry.
func (t *Transcript) Error(msg string) {
	ls := splitLines("✗ "+msg, groupError)
	t.newEntry(kindError, false, ls...)
}

// Notice adds one notice entry.
func (t *Transcript) Notice(msg string) {
	t.newEntry(kindNotice, false, splitLines(msg, groupNotice)...)
}

// EndTurn closes streamed entries; the next assistant output after a new
// user message gets its own header.
func (t *Transcript) EndTurn() { t.open = false }

// Resync makes the next flush send every line, for a buffer that holds
// none of them.
func (t *Transcript) Resync() {
	t.syncBase, t.syncEnd = t.base, t.base
	t.dirtyFrom = t.base
	clear(t.dirtyRows)
	t.sentID = -1
}

// Limit bounds what one flush sends, so that applying it stays within a
// frame's worth of Neovim's time (see DefaultLimit). A zero field bounds
// nothing.
type Limit struct {
	Bytes int // bytes of text written (lines, appended text, rows set in place)
	Lines int // lines written
}

// budget is what a flush has left of its Limit.
type budget struct {
	lim          Limit
	bytes, lines int
}

func (b *budget) spend(bytes, lines int) { b.bytes, b.lines = b.bytes+bytes, b.lines+lines }

// full reports that no further line fits.
func (b *budget) full() bool {
	return b.lim.Lines > 0 && b.lines >= b.lim.Lines || b.lim.Bytes > 0 && b.bytes >= b.lim.Bytes
}

// fit is how many bytes of s fit, cut before a UTF-8 character so that no
// character is split over two flushes; at least one character when nothing
// was spent yet, so every flush makes progress.
func (b *budget) fit(s string) int {
	room := b.lim.Bytes - b.bytes
	if b.lim.Bytes <= 0 || room >= len(s) {
		return len(s)
	}
	n := max(room, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 && b.bytes == 0 && b.lines == 0 {
		_, n = utf8.DecodeRuneInString(s)
	}
	return n
}

// Flush returns every change since the last flush and marks it sent.
func (t *Transcript) Flush() TranscriptOps {
	ops, _ := t.FlushWithin(Limit{})
	return ops
}

// FlushWithin returns the changes since the last flush, as many as fit in
// lim, and marks them sent; more reports that some are left for the next
// flush. What is left is the end of the transcript (lines after the last
// one sent, the rest of a line cut in two), so flushes never reorder text.
// Rows changed in place (completed tool lines) are few and short: they are
// always sent, and count against the budget.
func (t *Transcript) FlushWithin(lim Limit) (ops TranscriptOps, more bool) {
	ops = TranscriptOps{Have: t.syncEnd - t.syncBase, From: -1}
	// Lines Lua holds that the model dropped.
	if t.base > t.syncBase {
		ops.Trim = min(t.base, t.syncEnd) - t.syncBase
	}
	luaBase := t.syncBase + ops.Trim
	if luaBase < t.base { // Lua held none of the kept lines
		luaBase = t.base
	}
	b := budget{lim: lim}
	// The newest row written in this flush, with what Lua holds in it: when
	// it ends up as Lua's last row, a later flush may append to it.
	wrote, wroteText, wroteGroup := -1, "", ""
	written := func(id int, text, group string) {
		if id > wrote {
			wrote, wroteText, wroteGroup = id, text, group
		}
	}
	from := max(t.dirtyFrom, t.base)
	for row := range t.dirtyRows {
		if row >= t.base && row < from {
			l := t.lines[row-t.base]
			red := secret.Redact(l.text)
			ops.Set = append(ops.Set, RowLine{Row: row - luaBase, Text: red, Group: l.group})
			b.spend(len(red), 1)
			written(row, red, l.group)
		}
	}
	sortRows(ops.Set)
	syncEnd, dirtyFrom := t.end(), t.end()
	// The streamed line Lua holds as its last row grew: only what is new
	// goes, unless redaction changed what Lua already shows.
	if from == t.syncEnd-1 && from == t.sentID && from < t.end() {
		l := t.lines[from-t.base]
		// Whole lines: a key split over two streamed deltas is caught too.
		if red := secret.Redact(l.text); l.group == t.sentGroup && strings.HasPrefix(red, t.sent) {
			if add := red[len(t.sent):]; add != "" {
				n := b.fit(add)
				if n > 0 {
					ops.Append = &RowAppend{Row: from - luaBase, Col: len(t.sent), Text: add[:n], Group: l.group}
					b.spend(n, 1)
					written(from, red[:len(t.sent)+n], l.group)
				}
				if n < len(add) { // the rest of the line goes next time
					more = true
					syncEnd, dirtyFrom = t.syncEnd, from
				}
			}
			from++
		}
	}
	if !more && (from < t.end() || t.end() < t.syncEnd) {
		id, cut := from, false
		var lines, groups []string
		for ; id < t.end(); id++ {
			if b.full() {
				more = true
				break
			}
			l := t.lines[id-t.base]
			red := secret.Redact(l.text)
			n := b.fit(red)
			if n == 0 && red != "" {
				more = true
				break
			}
			lines, groups = append(lines, red[:n]), append(groups, l.group)
			b.spend(n, 1)
			written(id, red[:n], l.group)
			if n < len(red) { // Lua holds the line's start; the rest is appended
				more, cut = true, true
				id++
				break
			}
		}
		syncEnd, dirtyFrom = id, id
		if cut {
			dirtyFrom = id - 1
		}
		if len(lines) > 0 || from < t.syncEnd {
			ops.From, ops.Lines, ops.Groups = from-luaBase, lines, groups
		} else { // nothing fit, and Lua holds no row from here on: no tail op
			syncEnd = max(t.syncEnd, luaBase)
		}
	}
	t.syncBase, t.syncEnd, t.dirtyFrom = t.base, syncEnd, dirtyFrom
	clear(t.dirtyRows)
	// What Lua's last row holds, when this flush wrote it or it kept what
	// the last flush wrote there.
	switch last := syncEnd - 1; {
	case wrote == last:
		t.sent, t.sentGroup, t.sentID = wroteText, wroteGroup, last
	case t.sentID != last:
		t.sentID = -1
	}
	return ops, more
}

func sortRows(rs []RowLine) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Row < rs[j-1].Row; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
