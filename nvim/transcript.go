package nvim

import (
	"strings"

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

func splitLines(s string, group string) []line {
	parts := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	out := make([]line, len(parts))
	for i, p := range parts {
		out[i] = line{text: p, group: group}
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
		return
	}
	parts := splitLines(delta, group)
	t.lines[last].text = t.appendLast(last, parts[0].text)
	t.lines = append(t.lines, parts[1:]...)
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

// Flush returns the changes since the last flush and marks them sent.
func (t *Transcript) Flush() TranscriptOps {
	ops := TranscriptOps{Have: t.syncEnd - t.syncBase, From: -1}
	// Lines Lua holds that the model dropped.
	if t.base > t.syncBase {
		ops.Trim = min(t.base, t.syncEnd) - t.syncBase
	}
	luaBase := t.syncBase + ops.Trim
	if luaBase < t.base { // Lua held none of the kept lines
		luaBase = t.base
	}
	from := max(t.dirtyFrom, t.base)
	last := t.end() - 1
	for row := range t.dirtyRows {
		if row >= t.base && row < from {
			l := t.lines[row-t.base]
			ops.Set = append(ops.Set, RowLine{Row: row - luaBase, Text: secret.Redact(l.text), Group: l.group})
			if row == last {
				t.sent, t.sentGroup, t.sentID = ops.Set[len(ops.Set)-1].Text, l.group, row
			}
		}
	}
	sortRows(ops.Set)
	// The streamed line Lua holds as its last row grew: only what is new
	// goes, unless redaction changed what Lua already shows.
	if from == t.syncEnd-1 && from == t.sentID && from < t.end() {
		l := t.lines[from-t.base]
		// Whole lines: a key split over two streamed deltas is caught too.
		if red := secret.Redact(l.text); l.group == t.sentGroup && strings.HasPrefix(red, t.sent) {
			if len(red) > len(t.sent) {
				ops.Append = &RowAppend{Row: from - luaBase, Col: len(t.sent), Text: red[len(t.sent):], Group: l.group}
				t.sent = red
			}
			from++
		}
	}
	if from < t.end() || t.end() < t.syncEnd {
		ops.From = from - luaBase
		for _, l := range t.lines[from-t.base:] {
			ops.Lines = append(ops.Lines, secret.Redact(l.text))
			ops.Groups = append(ops.Groups, l.group)
		}
		if n := len(ops.Lines); n > 0 {
			t.sent, t.sentGroup, t.sentID = ops.Lines[n-1], ops.Groups[n-1], last
		}
	}
	if t.sentID != last {
		t.sentID = -1
	}
	t.syncBase, t.syncEnd = t.base, t.end()
	t.dirtyFrom = t.end()
	clear(t.dirtyRows)
	return ops
}

func sortRows(rs []RowLine) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Row < rs[j-1].Row; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
