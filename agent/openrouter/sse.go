package openrouter

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxSSELine bounds one line of the event stream. A server that sends a
// longer line (or never ends one) fails the request instead of growing
// Fido's memory without limit.
var maxSSELine = 16 << 20

// maxStreamBytes bounds the data of one answer: a server that streams
// without end fails the request instead of filling Fido's memory.
var maxStreamBytes int64 = 256 << 20

// sseBufferSize is the read buffer; lines up to this size are handed out
// without a copy.
const sseBufferSize = 32 << 10

// errLineTooLong ends a stream whose line exceeds maxSSELine;
// errStreamTooLong one whose data exceeds maxStreamBytes.
var (
	errLineTooLong   = errors.New("stream line too long")
	errStreamTooLong = errors.New("stream too long")
)

// eventReader splits a chat-completions event stream into chunks. It is
// built for this stream rather than for SSE at large: every `data:` line is
// one chunk (OpenAI-compatible servers send one JSON object per line), a
// blank line ends an event, and lines end in LF or CRLF.
//
//   - Comments (": OPENROUTER PROCESSING" keep-alives) and the id and retry
//     fields are skipped; they do not count as activity.
//   - `event: error` marks the data of that event as an error report.
//   - `data: [DONE]` ends the stream (io.EOF, sawDone).
//   - A last line without its newline still counts at a clean end.
//   - Anything else is kept as a bounded sample: a server that sent a web
//     page or a bare JSON error instead of a stream is reported as such.
//
// Lines are read with bufio.Reader.ReadSlice and handed out in place; only a
// line longer than the buffer is copied, into a buffer reused for the next
// long line. One eventReader is used by one goroutine.
type eventReader struct {
	br *bufio.Reader
	// long holds a line longer than br's buffer.
	long     []byte
	maxLine  int
	maxBytes int64
	// activity hears of every data line (the idle watchdog).
	activity *watchdog
	err      error
	total    int64
	// errorEvent reports that the payload next returned came in an
	// `event: error` event; inError is set inside such an event.
	errorEvent, inError bool

	sawData, sawDone bool
	tooLong, tooMuch bool
	// bare keeps JSON lines sent outside data lines; nonSSE the first bytes
	// of every line that is not SSE.
	bare, nonSSE bytes.Buffer
}

func newEventReader(r io.Reader, activity *watchdog) *eventReader {
	return &eventReader{br: bufio.NewReaderSize(r, sseBufferSize), activity: activity, maxLine: maxSSELine, maxBytes: maxStreamBytes}
}

// next returns the payload of the next data line, white space trimmed. The
// slice is valid until the following call. It returns io.EOF after [DONE] or
// at the end of the body, and the body's error (a cut connection, a
// cancelled request), errLineTooLong or errStreamTooLong otherwise.
func (r *eventReader) next() ([]byte, error) {
	for r.err == nil {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			if err != io.EOF {
				// A line cut by a failed read is not a line.
				return nil, err
			}
		}
		if len(line) == 0 {
			continue
		}
		if payload, ok := r.inspect(line); ok {
			return payload, nil
		}
	}
	return nil, r.err
}

// readLine reads one line with its newline; at the end of the body it
// returns the last unterminated bytes with io.EOF.
func (r *eventReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		if len(line) > r.maxLine {
			r.tooLong = true
			return nil, errLineTooLong
		}
		return line, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		if len(r.long)+len(line) > r.maxLine {
			r.tooLong, r.long = true, nil
			return nil, errLineTooLong
		}
		r.long = append(r.long, line...)
		if err != bufio.ErrBufferFull {
			return r.long, err
		}
	}
}

var (
	dataField  = []byte("data:")
	eventField = []byte("event:")
	idField    = []byte("id:")
	retryField = []byte("retry:")
	doneMarker = []byte("[DONE]")
	errorName  = []byte("error")
)

// inspect handles one line; it returns a data payload and true, or false
// for a line that carries none.
func (r *eventReader) inspect(line []byte) ([]byte, bool) {
	t := bytes.TrimSpace(line)
	switch {
	case len(t) == 0:
		r.inError = false
		return nil, false
	case t[0] == ':':
		return nil, false
	case bytes.HasPrefix(t, dataField):
		r.sawData = true
		r.activity.touch()
		if r.total += int64(len(line)); r.total > r.maxBytes {
			r.tooMuch, r.err = true, errStreamTooLong
			return nil, false
		}
		payload := bytes.TrimSpace(t[len(dataField):])
		if bytes.Equal(payload, doneMarker) {
			r.sawDone, r.err = true, io.EOF
			return nil, false
		}
		r.errorEvent = r.inError
		return payload, true
	case bytes.HasPrefix(t, eventField):
		r.inError = bytes.Equal(bytes.TrimSpace(t[len(eventField):]), errorName)
		return nil, false
	case bytes.HasPrefix(t, idField), bytes.HasPrefix(t, retryField):
		return nil, false
	}
	if t[0] == '{' && r.bare.Len() < maxErrorBody {
		r.bare.Write(t[:min(len(t), maxErrorBody-r.bare.Len())])
	}
	if r.nonSSE.Len() < maxErrorBody {
		r.nonSSE.Write(line[:min(len(line), maxErrorBody-r.nonSSE.Len())])
	}
	return nil, false
}

// notSSE is a sample of the body when the server sent no event stream at
// all (no data line), e.g. an HTML page with status 200; nil otherwise.
func (r *eventReader) notSSE() []byte {
	if r.sawData || r.nonSSE.Len() == 0 {
		return nil
	}
	return r.nonSSE.Bytes()
}

// bareJSON is the JSON the server sent outside data lines (a plain error
// object instead of a stream), or nil.
func (r *eventReader) bareJSON() []byte {
	if r.bare.Len() == 0 {
		return nil
	}
	return r.bare.Bytes()
}
