package nvim

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simBuffer applies TranscriptOps the way bridge.lua does.
type simBuffer struct {
	lines   []string
	groups  []string
	appends int
}

func (b *simBuffer) apply(t *testing.T, ops TranscriptOps) {
	t.Helper()
	require.Equal(t, len(b.lines), ops.Have, "the ops expect the lines the buffer holds")
	require.LessOrEqual(t, ops.Trim, len(b.lines), "trim beyond the buffer")
	b.lines, b.groups = b.lines[ops.Trim:], b.groups[ops.Trim:]
	for _, s := range ops.Set {
		require.Less(t, s.Row, len(b.lines), "set row beyond the buffer")
		b.lines[s.Row], b.groups[s.Row] = s.Text, s.Group
	}
	if a := ops.Append; a != nil {
		require.Equal(t, len(b.lines)-1, a.Row, "an append extends the last row")
		require.Len(t, b.lines[a.Row], a.Col, "an append starts at the row's end")
		require.NotEmpty(t, a.Text, "an append adds something")
		b.lines[a.Row], b.groups[a.Row] = b.lines[a.Row]+a.Text, a.Group
		b.appends++
	}
	if ops.From >= 0 {
		require.LessOrEqual(t, ops.From, len(b.lines), "tail starts beyond the buffer")
		require.Len(t, ops.Groups, len(ops.Lines))
		b.lines = append(b.lines[:ops.From:ops.From], ops.Lines...)
		b.groups = append(b.groups[:ops.From:ops.From], ops.Groups...)
	}
}

func modelGroups(tr *Transcript) []string {
	out := make([]string, len(tr.lines))
	for i, l := range tr.lines {
		out[i] = l.group
	}
	return out
}

func TestTranscriptRendersATurn(t *testing.T) {
	tr := NewTranscript(0)
	tr.User("explain main.go\nplease")
	tr.Reasoning("Let me ")
	tr.Reasoning("look.\nOK")
	tr.ToolCall("c1", "read_file", "main.go 1–40")
	tr.ToolResult("c1", "read_file", "40 lines", false)
	tr.Content("It prints")
	tr.Content(" hello.")
	tr.ToolCall("c2", "ripgrep", "foo")
	tr.ToolResult("c2", "ripgrep", "regex parse error", true)
	tr.Error("provider: 401 Unauthorized")
	tr.Notice("plan cleared")

	assert.Equal(t, []string{
		"## You", "explain main.go", "please",
		"", "## Fido",
		"Let me look.", "OK",
		"● read_file main.go 1–40 … ✓ 40 lines",
		"It prints hello.",
		"● ripgrep foo … ✗ regex parse error",
		"✗ provider: 401 Unauthorized",
		"plan cleared",
	}, tr.Lines())
	assert.Equal(t, []string{
		groupUser, groupUser, groupUser,
		"", groupHeader,
		groupReasoning, groupReasoning,
		groupTool,
		"",
		groupError,
		groupError,
		groupNotice,
	}, modelGroups(tr))
}

func TestTranscriptHeaderOncePerTurn(t *testing.T) {
	tr := NewTranscript(0)
	tr.User("a")
	tr.Content("x")
	tr.ToolCall("1", "list_files", ".")
	tr.Content("y")
	tr.EndTurn()
	tr.User("b")
	tr.Content("z")
	assert.Equal(t, []string{"## You", "a", "", "## Fido", "x", "● list_files .", "y", "", "## You", "b", "", "## Fido", "z"}, tr.Lines())
}

func TestTranscriptFlushesReproduceTheModel(t *testing.T) {
	type step func(tr *Transcript, i int)
	cases := []struct {
		name  string
		max   int
		steps int
		every int // flush after every n steps
		step  step
	}{
		{"streaming with newlines", 50, 400, 7, func(tr *Transcript, i int) {
			if i%13 == 0 {
				tr.Content(fmt.Sprintf("line %d\n", i))
			} else {
				tr.Content(fmt.Sprintf("t%d ", i))
			}
		}},
		{"long lines grow by appends", 6, 600, 3, func(tr *Transcript, i int) {
			switch {
			case i%97 == 0:
				tr.Reasoning(fmt.Sprintf("think %d ", i))
			case i%89 == 0:
				tr.ToolCall(fmt.Sprint(i), "read_file", "a.go")
			case i%151 == 0:
				tr.ToolResult(fmt.Sprint(i-89), "read_file", "ok", false)
			case i%41 == 0:
				tr.Content("end\n")
			default:
				tr.Content(fmt.Sprintf("w%d ", i))
			}
		}},
		{"notices beyond the limit", 20, 100, 3, func(tr *Transcript, i int) { tr.Notice(fmt.Sprintf("n%d", i)) }},
		{"burst trims unsent lines", 5, 200, 200, func(tr *Transcript, i int) { tr.Notice(fmt.Sprintf("n%d", i)) }},
		{"tool results complete older rows", 30, 300, 5, func(tr *Transcript, i int) {
			switch i % 4 {
			case 0:
				tr.ToolCall(fmt.Sprint(i), "read_file", fmt.Sprint(i))
			case 1:
				tr.Reasoning("r\nr")
			case 2:
				tr.ToolResult(fmt.Sprint(i-2), "read_file", "ok", i%8 == 2)
			case 3:
				tr.User(fmt.Sprintf("u%d", i))
			}
		}},
		{"result of a trimmed call", 3, 40, 1, func(tr *Transcript, i int) {
			if i%10 == 0 {
				tr.ToolCall("old", "x", "y")
			} else if i%10 == 9 {
				tr.ToolResult("old", "x", "done", false)
			} else {
				tr.Notice("n")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTranscript(c.max)
			var buf simBuffer
			for i := 0; i < c.steps; i++ {
				c.step(tr, i)
				if i%c.every == 0 {
					buf.apply(t, tr.Flush())
					require.Equal(t, tr.Lines(), buf.lines, "after step %d", i)
					require.Equal(t, modelGroups(tr), buf.groups, "after step %d", i)
				}
				assert.LessOrEqual(t, tr.Entries(), c.max)
			}
			buf.apply(t, tr.Flush())
			assert.Equal(t, tr.Lines(), buf.lines)
			assert.Equal(t, modelGroups(tr), buf.groups)
			assert.False(t, tr.Dirty())
			if strings.Contains(c.name, "appends") {
				assert.Greater(t, buf.appends, 100, "streamed lines grew by appends")
			}
		})
	}
}

func TestTranscriptKeepsNewestEntries(t *testing.T) {
	tr := NewTranscript(MaxEntries)
	for i := 0; i < 1100; i++ {
		tr.Notice(fmt.Sprintf("notice %d", i))
	}
	assert.Equal(t, MaxEntries, tr.Entries())
	lines := tr.Lines()
	require.Len(t, lines, MaxEntries)
	assert.Equal(t, "notice 100", lines[0])
	assert.Equal(t, "notice 1099", lines[len(lines)-1])
}

func TestTranscriptStreamingFlushSendsOnlyTheTail(t *testing.T) {
	tr := NewTranscript(0)
	tr.User("q")
	for i := 0; i < 100; i++ {
		tr.Notice("old")
	}
	tr.Flush()
	tr.Content("abc")
	tr.Flush()
	tr.Content("def")
	ops := tr.Flush()
	assert.Equal(t, 0, ops.Trim)
	assert.Empty(t, ops.Set)
	assert.Equal(t, &RowAppend{Row: tr.Len() - 1, Col: 3, Text: "def"}, ops.Append, "only what is new")
	assert.Equal(t, -1, ops.From)
	assert.Equal(t, TranscriptOps{Have: tr.Len(), From: -1}, tr.Flush(), "nothing changed")

	tr.Content("ghi\njkl")
	ops = tr.Flush()
	assert.Equal(t, &RowAppend{Row: tr.Len() - 2, Col: 6, Text: "ghi"}, ops.Append)
	assert.Equal(t, tr.Len()-1, ops.From, "and the new line whole")
	assert.Equal(t, []string{"jkl"}, ops.Lines)
	tr.Content("mno")
	ops = tr.Flush()
	assert.Equal(t, &RowAppend{Row: tr.Len() - 1, Col: 3, Text: "mno"}, ops.Append, "a line sent whole grows by appends")
	assert.Equal(t, -1, ops.From)
}

func TestToolLinesStayOnOneLine(t *testing.T) {
	tr := NewTranscript(0)
	tr.ToolCall("1", "run", "go test\n./...")
	tr.ToolResult("1", "run", "exit 1:\nFAIL", true)
	assert.Equal(t, []string{"## Fido", "● run go test ./... … ✗ exit 1: FAIL"}, tr.Lines())
	assert.False(t, strings.Contains(strings.Join(tr.Lines(), ""), "\n"))
}

// A long streamed line is built by appending, and stays correct when other
// entries interleave and when flushed in the middle. Past MaxRowBytes it
// continues on new rows, cut after a space.
func TestTranscriptLongStreamedLine(t *testing.T) {
	tr := NewTranscript(0)
	tr.User("q")
	head := tr.Len() + 2 // "" and "## Fido" come first
	var want strings.Builder
	var buf simBuffer
	for i := 0; i < 5000; i++ {
		tr.Content("word ")
		want.WriteString("word ")
		if i == 1000 {
			ops := tr.Flush()
			require.NotEmpty(t, ops.Lines)
			assert.Equal(t, want.String(), ops.Lines[len(ops.Lines)-1], "a flush mid-line sends the line so far")
			buf.apply(t, ops)
		}
	}
	ops := tr.Flush()
	require.NotNil(t, ops.Append, "the row Lua holds grows by an append")
	buf.apply(t, ops)
	assert.Equal(t, tr.Lines(), buf.lines)
	rowsOf := tr.Lines()[head:]
	require.Len(t, rowsOf, (5000*len("word ")+MaxRowBytes-1)/MaxRowBytes)
	for _, r := range rowsOf {
		assert.LessOrEqual(t, len(r), MaxRowBytes)
		assert.True(t, strings.HasSuffix(r, " "), "cut after a space")
	}
	assert.Equal(t, want.String(), strings.Join(rowsOf, ""), "the rows hold the line whole")
	got := tr.Lines()[tr.Len()-1]
	tr.ToolCall("1", "read_file", "a.go")
	tr.Content("after")
	tr.Content(" tool")
	ops = tr.Flush()
	assert.Equal(t, "after tool", ops.Lines[len(ops.Lines)-1])
	assert.Equal(t, rowsOf[len(rowsOf)-1], got, "an earlier line's text never changes under it")
}

// A line without spaces is cut at MaxRowBytes, between two characters; a
// pasted one (the user's text, a notice) is cut into rows too.
func TestTranscriptRowsOfALineWithoutSpaces(t *testing.T) {
	tr := NewTranscript(0)
	tr.Content("x")
	for i := 0; i < 3*MaxRowBytes/2; i++ {
		tr.Content("é") // two bytes
	}
	ls := tr.Lines()
	require.Equal(t, "## Fido", ls[0])
	require.Equal(t, 1+(1+3*MaxRowBytes+MaxRowBytes-2)/(MaxRowBytes-1), len(ls), "rows of MaxRowBytes-1 bytes (the last character does not fit whole)")
	for _, r := range ls[1:] {
		assert.True(t, utf8.ValidString(r))
		assert.LessOrEqual(t, len(r), MaxRowBytes)
	}
	assert.Len(t, ls[1], MaxRowBytes-1, "x and the characters that fit whole")
	assert.Equal(t, "x"+strings.Repeat("é", 3*MaxRowBytes/2), strings.Join(ls[1:], ""))

	tr = NewTranscript(0)
	tr.User(strings.Repeat("a", 2*MaxRowBytes+5) + "\nshort")
	assert.Equal(t, []string{"## You", strings.Repeat("a", MaxRowBytes), strings.Repeat("a", MaxRowBytes), "aaaaa", "short"}, tr.Lines())
}

// BenchmarkTranscriptLongLine streams a 100 KB answer on one line, flushed
// every 500 deltas (what the burst's flushes see).
func BenchmarkTranscriptLongLine(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr := NewTranscript(0)
		for j := 0; j < 20000; j++ {
			tr.Content("word ")
			if j%500 == 499 {
				tr.Flush()
			}
		}
		tr.Flush()
	}
}

// BenchmarkTranscriptStream streams 20,000 deltas with a newline every
// 16th, flushed every 6 deltas (190 deltas/s at FlushInterval).
func BenchmarkTranscriptStream(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr := NewTranscript(0)
		for j := 0; j < 20000; j++ {
			if j%16 == 15 {
				tr.Content("word\n")
			} else {
				tr.Content("word ")
			}
			if j%6 == 5 {
				tr.Flush()
			}
		}
		tr.Flush()
	}
}

func TestToolNoteAppendsToTheRunningCall(t *testing.T) {
	tr := NewTranscript(MaxEntries)
	tr.ToolCall("c1", "bash_exec", "set -e … (+13 lines)")
	tr.ToolNote("c1", ":FidoShow c1")
	tr.ToolResult("c1", "bash_exec", "exit 0", false)
	tr.ToolNote("c1", "late") // the call is over: nothing
	ops := tr.Flush()
	assert.Contains(t, ops.Lines, "● bash_exec set -e … (+13 lines) · :FidoShow c1 … ✓ exit 0")
}

// A full transcript does not copy all its lines for every new entry.
func TestTranscriptTrimDoesNotCopyEveryLine(t *testing.T) {
	tr := NewTranscript(MaxEntries)
	answer := strings.Repeat("a line of the answer\n", 49)
	for i := 0; i < MaxEntries; i++ {
		tr.Content(answer)
		tr.EndTurn()
		tr.User(fmt.Sprintf("q%d", i))
	}
	require.Equal(t, MaxEntries, tr.Entries())
	lines := tr.Len()
	require.Greater(t, lines, 10000)
	allocs := testing.AllocsPerRun(200, func() { tr.Notice("n") })
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range 200 {
		tr.Notice("n")
	}
	runtime.ReadMemStats(&ms1)
	perEntry := float64(ms1.TotalAlloc-ms0.TotalAlloc) / 200
	// Copying the lines would be some 32 bytes a line, every time.
	assert.Less(t, perEntry, float64(lines)*32/10, "bytes allocated per entry (%.0f allocs)", allocs)
	assert.Equal(t, MaxEntries, tr.Entries())
	assert.Equal(t, "n", tr.Lines()[tr.Len()-1])
}

// After Resync (Lua's buffer was wiped) the next flush sends every kept line
// to an empty buffer, and streaming goes on from there.
func TestTranscriptResyncSendsEverything(t *testing.T) {
	tr := NewTranscript(5)
	var buf simBuffer
	for i := 0; i < 8; i++ {
		tr.Notice(fmt.Sprintf("n%d", i))
	}
	tr.User("q")
	tr.Content("partial")
	buf.apply(t, tr.Flush())
	tr.Content(" answer")
	tr.Resync()
	buf = simBuffer{}
	ops := tr.Flush()
	assert.Equal(t, 0, ops.Have)
	assert.Equal(t, 0, ops.From)
	assert.Nil(t, ops.Append, "nothing to append to")
	buf.apply(t, ops)
	assert.Equal(t, tr.Lines(), buf.lines)
	assert.Equal(t, modelGroups(tr), buf.groups)
	tr.Content(" goes on")
	ops = tr.Flush()
	require.NotNil(t, ops.Append)
	buf.apply(t, ops)
	assert.Equal(t, tr.Lines(), buf.lines)
	assert.Equal(t, "partial answer goes on", buf.lines[len(buf.lines)-1])
}

// opsSize is what a flush writes: bytes of text and lines.
func opsSize(ops TranscriptOps) (bytes, lines int) {
	for _, s := range ops.Set {
		bytes, lines = bytes+len(s.Text), lines+1
	}
	if ops.Append != nil {
		bytes, lines = bytes+len(ops.Append.Text), lines+1
	}
	for _, l := range ops.Lines {
		bytes, lines = bytes+len(l), lines+1
	}
	return bytes, lines
}

// assertPrefix checks that the buffer holds the model's text up to some
// point: every line but the last as the model has it, the last one a start
// of the model's line. Nothing is lost or out of order, only not sent yet.
func assertPrefix(t *testing.T, tr *Transcript, buf *simBuffer, msg string) {
	t.Helper()
	model := tr.Lines()
	require.LessOrEqual(t, len(buf.lines), len(model), msg)
	for i, l := range buf.lines {
		if i == len(buf.lines)-1 {
			require.True(t, strings.HasPrefix(model[i], l), "%s: row %d %q is not a start of %q", msg, i, l, model[i])
		} else {
			require.Equal(t, model[i], l, "%s: row %d", msg, i)
		}
		require.Equal(t, modelGroups(tr)[i], buf.groups[i], "%s: group of row %d", msg, i)
	}
}

// Flushes bounded by a Limit send at most that much; what they leave goes
// in the next ones, in order, so the buffer is always a start of the model
// and the model itself once the flushes caught up. Cut lines continue by
// appends, multi-byte characters are never split.
func TestTranscriptBoundedFlushes(t *testing.T) {
	for _, lim := range []Limit{{Bytes: 1}, {Bytes: 7}, {Bytes: 64}, {Lines: 1}, {Lines: 3}, {Bytes: 50, Lines: 4}} {
		t.Run(fmt.Sprintf("%d bytes, %d lines", lim.Bytes, lim.Lines), func(t *testing.T) {
			tr := NewTranscript(40)
			var buf simBuffer
			flushes := 0
			flush := func(msg string) bool {
				ops, more := tr.FlushWithin(lim)
				flushes++
				bytes, lines := opsSize(ops)
				if lim.Bytes > 0 && bytes > lim.Bytes {
					// Only the rows set in place and the progress rule's one character may go over.
					assert.LessOrEqual(t, bytes, lim.Bytes+len(ops.Set)*80+4, "%s: %d bytes", msg, bytes)
				}
				if lim.Lines > 0 {
					assert.LessOrEqual(t, lines, lim.Lines+len(ops.Set), "%s: %d lines", msg, lines)
				}
				buf.apply(t, ops)
				for _, l := range append(append([]string{}, ops.Lines...), buf.lines...) {
					require.True(t, utf8.ValidString(l), "%s: a character was split: %q", msg, l)
				}
				assertPrefix(t, tr, &buf, msg)
				return more
			}
			for i := 0; i < 400; i++ {
				switch {
				case i%37 == 0:
					tr.User(fmt.Sprintf("question %d\nwith two lines", i))
				case i%23 == 0:
					tr.ToolCall(fmt.Sprint(i), "read_file", "a.go")
				case i%29 == 0:
					tr.ToolResult(fmt.Sprint(i-6), "read_file", "ok", false)
				case i%19 == 0:
					tr.Reasoning("thinking ünïcødé ✓ …\nmore ")
				case i%11 == 0:
					tr.Content("end of a line\n\n")
				default:
					tr.Content(fmt.Sprintf("wörd%d ", i))
				}
				if i%5 == 0 {
					flush(fmt.Sprintf("step %d", i))
				}
			}
			for n := 0; flush("draining"); n++ {
				require.Less(t, n, 100000, "the flushes catch up")
			}
			assert.Equal(t, tr.Lines(), buf.lines)
			assert.Equal(t, modelGroups(tr), buf.groups)
			assert.False(t, tr.Dirty())
			if lim.Bytes > 0 && lim.Bytes < 64 {
				assert.Greater(t, buf.appends, 10, "cut lines continue by appends")
			}
		})
	}
}

// A 100,000-delta answer on one line goes out in pieces of the limit, each
// an append to the row the last piece ended.
func TestTranscriptBoundedFlushCutsALongLine(t *testing.T) {
	tr := NewTranscript(0)
	tr.User("q")
	for i := 0; i < 100000; i++ {
		tr.Content("word ")
	}
	var buf simBuffer
	lim := Limit{Bytes: 64 << 10, Lines: 1000}
	var pieces []int
	for {
		ops, more := tr.FlushWithin(lim)
		bytes, _ := opsSize(ops)
		assert.LessOrEqual(t, bytes, lim.Bytes)
		pieces = append(pieces, bytes)
		buf.apply(t, ops)
		if !more {
			break
		}
	}
	assert.Equal(t, tr.Lines(), buf.lines)
	assert.Len(t, pieces, (500000+len("## You\nq\n\n## Fido\n")+lim.Bytes-1)/lim.Bytes)
	assert.Equal(t, len(pieces)-1, buf.appends, "after the first, every piece is an append")
}
