package openrouter

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
)

// readEvents reads every payload until next fails, copying each (a payload
// is only valid until the following call).
func readEvents(r *eventReader) ([]string, error) {
	var out []string
	for {
		p, err := r.next()
		if err != nil {
			return out, err
		}
		if r.errorEvent {
			out = append(out, "error event: "+string(p))
			continue
		}
		out = append(out, string(p))
	}
}

// splitReader returns its data in two reads, cut at one offset.
type splitReader struct {
	parts [][]byte
}

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

// sampleStream has every kind of line the reader knows, framed with LF.
const sampleStream = ": OPENROUTER PROCESSING\n\n" +
	"data: {\"a\":1}\n\n" +
	"id: 7\nretry: 100\n" +
	"data:{\"b\":2}\n\n" +
	": a comment\n" +
	"event: error\ndata: {\"message\":\"overloaded\"}\n\n" +
	"data: {\"c\":\"x y\"}\n\n" +
	"data: [DONE]\n\n" +
	"data: {\"after\":\"done\"}\n\n"

var sampleEvents = []string{`{"a":1}`, `{"b":2}`, `error event: {"message":"overloaded"}`, `{"c":"x y"}`}

// The stream splits the same however the bytes arrive: cut at every
// offset, one byte per read, and with CRLF line ends.
func TestEventReaderFraming(t *testing.T) {
	for _, framing := range []struct {
		name   string
		stream string
	}{{"LF", sampleStream}, {"CRLF", strings.ReplaceAll(sampleStream, "\n", "\r\n")}} {
		t.Run(framing.name, func(t *testing.T) {
			stream := []byte(framing.stream)
			for cut := 0; cut <= len(stream); cut++ {
				r := newEventReader(&splitReader{parts: [][]byte{bytes.Clone(stream[:cut]), bytes.Clone(stream[cut:])}}, nil)
				got, err := readEvents(r)
				require.ErrorIs(t, err, io.EOF, "cut at %d", cut)
				require.Equal(t, sampleEvents, got, "cut at %d", cut)
				require.True(t, r.sawDone, "cut at %d", cut)
			}
			r := newEventReader(iotest.OneByteReader(bytes.NewReader(stream)), nil)
			got, err := readEvents(r)
			require.ErrorIs(t, err, io.EOF)
			assert.Equal(t, sampleEvents, got, "one byte per read")
		})
	}
}

// Only data lines count as activity: comments and keep-alives do not.
func TestEventReaderActivity(t *testing.T) {
	wd := startWatchdog(time.Hour, func() {})
	defer wd.stop()
	r := newEventReader(strings.NewReader(strings.Repeat(": OPENROUTER PROCESSING\n\n", 50)+"data: {}\n\ndata: {}\n\n"), wd)
	_, err := readEvents(r)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, int64(2), wd.seen.Load())
	assert.False(t, r.sawDone)
}

// A line longer than the read buffer (1 MB) arrives whole, and the lines
// after it are read as usual.
func TestEventReaderLongLine(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	stream := "data: {\"content\":\"" + big + "\"}\n\ndata: {\"n\":2}\n\ndata: {\"content\":\"" + big[:70000] + "\"}\n\ndata: [DONE]\n\n"
	got, err := readEvents(newEventReader(strings.NewReader(stream), nil))
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, got, 3)
	assert.Equal(t, `{"content":"`+big+`"}`, got[0])
	assert.Equal(t, `{"n":2}`, got[1])
	assert.Len(t, got[2], 70000+len(`{"content":""}`))
}

// A stream that ends without [DONE] hands out what it had, then io.EOF;
// a last line without its newline still counts at a clean end, but not
// when the connection broke in the middle of it.
func TestEventReaderEndings(t *testing.T) {
	r := newEventReader(strings.NewReader("data: {\"a\":1}\n\ndata: {\"b\":2}"), nil)
	got, err := readEvents(r)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, []string{`{"a":1}`, `{"b":2}`}, got)
	assert.False(t, r.sawDone)

	cut := errors.New("connection reset")
	r = newEventReader(io.MultiReader(strings.NewReader("data: {\"a\":1}\n\ndata: {\"b\""), iotest.ErrReader(cut)), nil)
	got, err = readEvents(r)
	require.ErrorIs(t, err, cut)
	assert.Equal(t, []string{`{"a":1}`}, got)
}

func TestEventReaderCaps(t *testing.T) {
	t.Run("line", func(t *testing.T) {
		r := newEventReader(strings.NewReader("data: {}\n\ndata: "+strings.Repeat("a", 100<<10)+"\n\n"), nil)
		r.maxLine = 64 << 10
		got, err := readEvents(r)
		require.ErrorIs(t, err, errLineTooLong)
		assert.True(t, r.tooLong)
		assert.Equal(t, []string{"{}"}, got)
	})
	t.Run("line shorter than the buffer", func(t *testing.T) {
		r := newEventReader(strings.NewReader("data: "+strings.Repeat("a", 200)+"\n\n"), nil)
		r.maxLine = 100
		_, err := readEvents(r)
		require.ErrorIs(t, err, errLineTooLong)
	})
	t.Run("answer", func(t *testing.T) {
		r := newEventReader(strings.NewReader(strings.Repeat("data: {\"content\":\"0123456789\"}\n\n", 100)), nil)
		r.maxBytes = 1000
		got, err := readEvents(r)
		require.ErrorIs(t, err, errStreamTooLong)
		assert.True(t, r.tooMuch)
		assert.Len(t, got, 1000/len("data: {\"content\":\"0123456789\"}\n"))
	})
}

// What is not SSE is kept as a bounded sample (a web page, a bare JSON
// error); SSE fields and comments are not.
func TestEventReaderNotSSE(t *testing.T) {
	r := newEventReader(strings.NewReader("<html>\n<title>Portal</title>\n{\"error\":{\"message\":\"no\"}}\n: comment\nevent: x\n"), nil)
	_, err := readEvents(r)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, "<html>\n<title>Portal</title>\n{\"error\":{\"message\":\"no\"}}\n", string(r.notSSE()))
	assert.Equal(t, `{"error":{"message":"no"}}`, string(r.bareJSON()))

	r = newEventReader(strings.NewReader("data: {}\n\n"+strings.Repeat("junk line\n", 20000)), nil)
	_, err = readEvents(r)
	require.ErrorIs(t, err, io.EOF)
	assert.Nil(t, r.notSSE(), "a stream with data is SSE")
	assert.Equal(t, maxErrorBody, r.nonSSE.Len(), "the sample is bounded")
}

// The substring checks that decide whether a chunk needs a full parse.
func TestHasStringValue(t *testing.T) {
	for _, tt := range []struct {
		json string
		want bool
	}{
		{`{"choices":[{"delta":{},"finish_reason":null}]}`, false},
		{`{"choices":[{"delta":{},"finish_reason":"stop"}]}`, true},
		{`{"choices":[{"delta":{},"finish_reason" :	"stop"}]}`, true},
		{`{"choices":[{"finish_reason":null,"native_finish_reason":"STOP"}]}`, true},
		{`{"choices":[{"delta":{"content":"say \"finish_reason\": \"x\""},"finish_reason":null}]}`, false},
		{`{"choices":[{"delta":{"content":"finish_reason"}}]}`, false},
	} {
		assert.Equal(t, tt.want, hasStringValue([]byte(tt.json), finishMark), tt.json)
	}
}

// A chunk's finish reason is found wherever the key sits and however the
// JSON is spaced; a null one leaves the reason unset.
func TestChunkFinishReason(t *testing.T) {
	for _, tt := range []struct {
		chunk, want string
	}{
		{`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null,"native_finish_reason":null}]}`, ""},
		{`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`, "length"},
		{`{"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}]}`, "stop"},
		{`{"choices":[{"finish_reason":"tool_calls","index":0,"delta":{"content":"a"}}]}`, "tool_calls"},
		{`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null,"native_finish_reason":"STOP"}]}`, ""},
		{`{"choices":[{"index":0,"delta":{"content":"a"}}],"finish_reason":"stop"}`, ""},
	} {
		var got []agent.Delta
		acc := newAccumulator(func(d agent.Delta) { got = append(got, d) })
		require.Nil(t, acc.chunk([]byte(tt.chunk), false))
		acc.flush()
		assert.Equal(t, tt.want, acc.finishReason, tt.chunk)
		assert.Equal(t, []agent.Delta{{Kind: agent.DeltaContent, Text: "a"}}, got, tt.chunk)
	}
}
