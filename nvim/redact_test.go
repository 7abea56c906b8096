package nvim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fido-nvim/fido/tools/secret"
)

// A key never reaches the transcript buffer, not even when the model streams
// it in pieces or the user pastes it.
func TestTranscriptRedactsKeys(t *testing.T) {
	const key = "sk-or-v1-transcript-0123456789abcdef"
	secret.Add(key)
	tr := NewTranscript(1000)
	var buf simBuffer
	tr.User("my key is " + key)
	buf.apply(t, tr.Flush())
	tr.Content("it is sk-or-v1-transcr")
	buf.apply(t, tr.Flush())
	tr.Content("ipt-0123456789abcdef, keep it safe")
	buf.apply(t, tr.Flush())
	text := strings.Join(buf.lines, "\n")
	assert.NotContains(t, text, key)
	assert.Contains(t, text, "my key is [redacted]")
	assert.Contains(t, text, "it is [redacted], keep it safe")
}

// Redaction still holds when bounded flushes cut a line, wherever the cut
// falls: inside the key, or between two deltas that each hold a part of it.
func TestTranscriptRedactsKeysAcrossBoundedFlushes(t *testing.T) {
	const key = "sk-or-v1-bounded-0123456789abcdef"
	secret.Add(key)
	for cut := 1; cut <= 40; cut++ {
		tr := NewTranscript(1000)
		var buf simBuffer
		var sent strings.Builder // every byte any flush carried
		drain := func() {
			for {
				ops, more := tr.FlushWithin(Limit{Bytes: cut})
				for _, s := range ops.Set {
					sent.WriteString(s.Text + "\n")
				}
				if ops.Append != nil {
					sent.WriteString(ops.Append.Text)
				}
				for _, l := range ops.Lines {
					sent.WriteString("\n" + l)
				}
				buf.apply(t, ops)
				assert.NotContains(t, strings.Join(buf.lines, "\n"), key, "cut every %d bytes", cut)
				if !more {
					return
				}
			}
		}
		tr.User("q")
		tr.Content("whole: it is " + key + ", keep it safe. split: it is sk-or-v1-bou")
		// Only the first part of the line goes now.
		ops, _ := tr.FlushWithin(Limit{Bytes: cut})
		buf.apply(t, ops)
		tr.Content("nded-0123456789abcdef, safe too")
		drain()
		assert.Equal(t, []string{"## You", "q", "", "## Fido",
			"whole: it is [redacted], keep it safe. split: it is [redacted], safe too"}, buf.lines, "cut every %d bytes", cut)
		assert.NotContains(t, sent.String(), key, "cut every %d bytes", cut)
	}
}

// A key where a long line is cut into rows stays whole on one row, so it is
// still redacted: streamed whole, or its start ending the line so far.
func TestTranscriptRowCutKeepsKeysWhole(t *testing.T) {
	const key = "sk-or-v1-rowcut-0123456789abcdef"
	secret.Add(key)
	for _, split := range []int{0, 5, len(key) - 1} {
		tr := NewTranscript(1000)
		var buf simBuffer
		pad := strings.Repeat("x", MaxRowBytes-10) // the key straddles the limit
		tr.Content(pad + key[:split])
		buf.apply(t, tr.Flush())
		tr.Content(key[split:] + " and more")
		buf.apply(t, tr.Flush())
		text := strings.Join(buf.lines, "\n")
		assert.NotContains(t, text, key, "split at %d", split)
		assert.Contains(t, text, "[redacted] and more", "split at %d", split)
		for i, l := range tr.Lines() {
			assert.Equal(t, secret.Redact(l), buf.lines[i], "split at %d: row %d holds the model's row", split, i)
		}
	}
}
