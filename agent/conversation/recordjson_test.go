package conversation

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pieces that need care in a JSON string, and plain text around them.
var jsonPieces = []string{"a", "plain words ", "<b>", "&amp;", ">", `"`, `\`, "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f",
	"é", "日本語", "😀", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "word word word word "}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(40); n > 0; n-- {
		b.WriteString(jsonPieces[r.IntN(len(jsonPieces))])
	}
	return b.String()
}

// appendMessageRecord writes the very bytes encoding/json writes, for
// messages of every shape and text of every kind.
func TestMessageRecordBytesAreEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 12, 2, 3, 4, 5, 123456789, time.UTC)
	for i := range 2000 {
		m := Message{Role: []Role{RoleUser, RoleAssistant, RoleTool}[i%3], Content: randomText(r)}
		if r.IntN(2) == 0 {
			m.Reasoning = randomText(r)
		}
		for n := r.IntN(3); n > 0; n-- {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: randomText(r), Name: randomText(r), Arguments: randomText(r)})
		}
		if r.IntN(3) == 0 {
			m.ToolCallID, m.Name = randomText(r), randomText(r)
		}
		if r.IntN(2) == 0 {
			m.Turn, m.Time = r.IntN(100)-10, randomText(r)
		}
		rec := record{T: "msg", At: at.Add(time.Duration(r.IntN(1e9))), M: &m}
		switch r.IntN(4) {
		case 0:
			rec.Note = &ResultNote{Summary: randomText(r), IsError: r.IntN(2) == 0}
		case 1:
			rec.Note = &ResultNote{}
		}
		want, err := json.Marshal(rec)
		require.NoError(t, err)
		got, ok := appendMessageRecord([]byte("prefix"), &rec)
		require.True(t, ok)
		require.Equal(t, "prefix"+string(want), string(got))
	}
}

// Other records, and messages with reasoning details, are left to
// encoding/json.
func TestMessageRecordLeavesOthersToEncodingJSON(t *testing.T) {
	m := &Message{Role: RoleAssistant, Content: "x"}
	for _, rec := range []record{
		{T: "head", ID: "x"},
		{T: "meta", Title: "t"},
		{T: "msg", M: &Message{Role: RoleAssistant, ReasoningDetails: json.RawMessage(`[{"type":"reasoning.text"}]`)}},
		{T: "msg", M: m, Mode: "plan"},
		{T: "msg"},
	} {
		got, ok := appendMessageRecord([]byte("keep"), &rec)
		assert.False(t, ok, rec.T)
		assert.Equal(t, "keep", string(got))
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, p := range jsonPieces {
		f.Add(p + "plain text of some length " + p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, s)))
	})
}

// BenchmarkMessageRecord100KB saves a 100 KB answer's record both ways.
func BenchmarkMessageRecord100KB(b *testing.B) {
	rec := record{T: "msg", At: time.Now(), M: &Message{Role: RoleAssistant, Content: strings.Repeat("word ", 20000)}}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendMessageRecord", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = appendMessageRecord(buf[:0], &rec)
		}
	})
}
