package conversation

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendMessageRecord appends the JSON of a message record, the log's most
// frequent and largest kind (an answer, a file's content in a tool
// result), and reports true; or reports false, having appended nothing,
// for a record it leaves to encoding/json (any other kind, or a message
// carrying reasoning details). The bytes are those encoding/json writes for
// the record, written straight into dst: encoding/json builds them in a
// buffer of its own first and escapes a long text a byte at a time, which
// made saving a 100 KB answer cost more than streaming it.
func appendMessageRecord(dst []byte, r *record) ([]byte, bool) {
	m := r.M
	if m != nil {
		// Room for the record at once: a long text is not copied from
		// smaller buffers to larger ones as it is written.
		n := 256 + len(m.Content) + len(m.Reasoning) + len(m.Time)
		for _, tc := range m.ToolCalls {
			n += 64 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
		if r.Note != nil {
			n += len(r.Note.Summary)
		}
		if cap(dst)-len(dst) < n+n/8 {
			dst = append(make([]byte, 0, len(dst)+n+n/8), dst...)
		}
	}
	if r.T != "msg" || m == nil || len(m.ReasoningDetails) > 0 || r.ID != "" || r.Root != "" || r.Call != "" ||
		r.Title != "" || r.Model != "" || r.Cost != 0 || r.Reason != "" || r.Ms != nil || r.Seen != nil || r.Mode != "" {
		return dst, false
	}
	at, err := r.At.MarshalJSON()
	if err != nil {
		return dst, false
	}
	dst = append(dst, `{"t":"msg","at":`...)
	dst = append(dst, at...)
	dst = append(dst, `,"m":{"role":`...)
	dst = appendJSONString(dst, string(m.Role))
	dst = append(dst, `,"content":`...)
	dst = appendJSONString(dst, m.Content)
	if m.Reasoning != "" {
		dst = append(dst, `,"reasoning":`...)
		dst = appendJSONString(dst, m.Reasoning)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = appendJSONString(dst, tc.ID)
			dst = append(dst, `,"name":`...)
			dst = appendJSONString(dst, tc.Name)
			dst = append(dst, `,"arguments":`...)
			dst = appendJSONString(dst, tc.Arguments)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = appendJSONString(dst, m.ToolCallID)
	}
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, m.Name)
	}
	if m.Turn != 0 {
		dst = append(dst, `,"turn":`...)
		dst = strconv.AppendInt(dst, int64(m.Turn), 10)
	}
	if m.Time != "" {
		dst = append(dst, `,"time":`...)
		dst = appendJSONString(dst, m.Time)
	}
	dst = append(dst, '}')
	if n := r.Note; n != nil {
		dst = append(dst, `,"note":{`...)
		if n.Summary != "" {
			dst = append(dst, `"summary":`...)
			dst = appendJSONString(dst, n.Summary)
		}
		if n.IsError {
			if n.Summary != "" {
				dst = append(dst, ',')
			}
			dst = append(dst, `"error":true`...)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), true
}

// jsonPlain marks the bytes a JSON string holds as they are, as
// encoding/json writes them: printable ASCII but for `"`, `\` and the HTML
// characters `<`, `>` and `&`.
var jsonPlain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped exactly as
// encoding/json escapes it (HTML characters, U+2028 and U+2029 included;
// invalid UTF-8 becomes U+FFFD). Runs of eight plain bytes are recognised a
// word at a time.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) && plainWord(le64(s, i)) {
			i += 8
		}
		if i == len(s) {
			break
		}
		b := s[i]
		if jsonPlain[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// le64 reads s[i:i+8] as a little-endian word (one load).
func le64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// plainWord reports whether all eight bytes of w are plain (see jsonPlain):
// none has its high bit set, none is below 0x20, and none is one of
// " \ < > &. (x-lo)&^x&hi is non-zero when a byte of x is zero; a false
// alarm only sends the word to the byte loop.
func plainWord(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, bs, lt, gt, am := w^('"'*lo), w^('\\'*lo), w^('<'*lo), w^('>'*lo), w^('&'*lo)
	return (w|(w-0x20*lo)&^w|(q-lo)&^q|(bs-lo)&^bs|(lt-lo)&^lt|(gt-lo)&^gt|(am-lo)&^am)&hi == 0
}

// record is one line of a conversation log.
type record struct {
	T      string            `json:"t"`
	At     time.Time         `json:"at"`
	ID     string            `json:"id,omitempty"`
	Root   string            `json:"root,omitempty"`
	M      *Message          `json:"m,omitempty"`
	Call   string            `json:"call,omitempty"`
	Title  string            `json:"title,omitempty"`
	Model  string            `json:"model,omitempty"`
	Cost   float64           `json:"cost,omitempty"`
	Reason string            `json:"reason,omitempty"`
	Ms     []Message         `json:"ms,omitempty"`
	Note   *ResultNote       `json:"note,omitempty"`
	Seen   map[string]string `json:"seen,omitempty"`
	Mode   string            `json:"mode,omitempty"`
}

// ResultNote is how a tool result was shown in the transcript.
type ResultNote struct {
	Summary string `json:"summary,omitempty"`
	IsError bool   `json:"error,omitempty"`
}
