package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// Created is the fixed "created" timestamp of every chunk (deterministic output).
const Created = 1700000000

type stepKind int

const (
	stepDelta   stepKind = iota // data = delta object JSON
	stepFinish                  // data = finish reason
	stepUsage                   // data = usage object JSON
	stepError                   // data = error object JSON; ends the stream
	stepChunk                   // data = verbatim data payload
	stepRaw                     // data = verbatim bytes
	stepComment                 // data = comment text; count = repetitions
	stepPause                   // delay = silence
	stepPace                    // delay = gap before every later event
	stepCut                     // abort the connection
	stepStall                   // send nothing until the client goes away
	stepHold                    // hold = send nothing until it is closed
)

type step struct {
	kind  stepKind
	data  string
	count int
	delay time.Duration
	hold  <-chan struct{}
}

// ReplyBuilder scripts one 200 streaming response. Steps are sent in the order
// they were added, each event flushed on its own; the stream ends with
// `data: [DONE]` unless NoDone was called or it ended with Error, Cut or Stall.
// A builder may be enqueued several times or used as the default.
type ReplyBuilder struct {
	steps    []step
	headers  [][2]string
	noDone   bool
	nextTool int
}

// Reply starts an empty streaming reply.
func Reply() *ReplyBuilder { return &ReplyBuilder{} }

// Text is a complete plain answer: one content delta and finish_reason "stop".
func Text(s string) *ReplyBuilder { return Reply().Content(s).Finish("stop") }

func (b *ReplyBuilder) add(s step) *ReplyBuilder {
	b.steps = append(b.steps, s)
	return b
}

func (b *ReplyBuilder) delta(fields ...string) *ReplyBuilder {
	return b.add(step{kind: stepDelta, data: "{" + strings.Join(fields, ",") + "}"})
}

// Header sets a response header (e.g. X-Generation-Id).
func (b *ReplyBuilder) Header(key, value string) *ReplyBuilder {
	b.headers = append(b.headers, [2]string{key, value})
	return b
}

// Role sends the usual first delta {"role":"assistant","content":""}.
func (b *ReplyBuilder) Role() *ReplyBuilder {
	return b.delta(`"role":"assistant"`, `"content":""`)
}

// Reasoning sends a delta with OpenRouter's "reasoning" text.
func (b *ReplyBuilder) Reasoning(text string) *ReplyBuilder {
	return b.delta(`"content":""`, `"reasoning":`+quote(text))
}

// ReasoningContent sends a delta with DeepSeek-style "reasoning_content".
func (b *ReplyBuilder) ReasoningContent(text string) *ReplyBuilder {
	return b.delta(`"content":""`, `"reasoning_content":`+quote(text))
}

// ReasoningDetails sends a delta whose reasoning_details is detailsJSON (an
// array); reasoning, when not empty, is sent beside it as OpenRouter does.
func (b *ReplyBuilder) ReasoningDetails(reasoning, detailsJSON string) *ReplyBuilder {
	fields := []string{`"content":""`}
	if reasoning != "" {
		fields = append(fields, `"reasoning":`+quote(reasoning))
	}
	return b.delta(append(fields, `"reasoning_details":`+compact(detailsJSON))...)
}

// Content sends one content delta.
func (b *ReplyBuilder) Content(text string) *ReplyBuilder {
	return b.delta(`"content":` + quote(text))
}

// ContentDeltas sends n content deltas of piece each (benchmarks: combine
// with Pace for a realistic rate, or leave unpaced for a burst).
func (b *ReplyBuilder) ContentDeltas(n int, piece string) *ReplyBuilder {
	for range n {
		b.Content(piece)
	}
	return b
}

// ToolCall sends one tool call with the next index (0, 1, …), its arguments
// split into fragments chunks (≥ 1): the first carries index, id, type and
// name with the first piece of arguments, the others only index and a piece.
func (b *ReplyBuilder) ToolCall(id, name, args string, fragments int) *ReplyBuilder {
	idx := b.nextTool
	b.nextTool++
	pieces := split(args, max(fragments, 1))
	for i, p := range pieces {
		var tc string
		if i == 0 {
			tc = fmt.Sprintf(`{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":%s}}`,
				idx, quote(id), quote(name), quote(p))
		} else {
			tc = fmt.Sprintf(`{"index":%d,"function":{"arguments":%s}}`, idx, quote(p))
		}
		b.delta(`"content":null`, `"tool_calls":[`+tc+`]`)
	}
	return b
}

// ToolCallDelta sends a delta whose tool_calls array is toolCallsJSON
// verbatim (odd upstreams: index -1, no index, several calls in one chunk).
func (b *ReplyBuilder) ToolCallDelta(toolCallsJSON string) *ReplyBuilder {
	return b.delta(`"content":null`, `"tool_calls":`+compact(toolCallsJSON))
}

// Finish sends an empty delta with this finish_reason.
func (b *ReplyBuilder) Finish(reason string) *ReplyBuilder {
	return b.add(step{kind: stepFinish, data: reason})
}

// Usage sends OpenRouter's final usage chunk (with "choices": []).
func (b *ReplyBuilder) Usage(prompt, completion, cached int, cost float64) *ReplyBuilder {
	u := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`+
		`"prompt_tokens_details":{"cached_tokens":%d},"completion_tokens_details":{"reasoning_tokens":0},"cost":%s}`,
		prompt, completion, prompt+completion, cached, strconv.FormatFloat(cost, 'g', -1, 64))
	return b.add(step{kind: stepUsage, data: u})
}

// Error sends OpenRouter's mid-stream error chunk (first key "id", a
// top-level "error", finish_reason "error") and ends the stream without
// [DONE]. code may be a number or a string such as "server_error".
func (b *ReplyBuilder) Error(code any, message string) *ReplyBuilder {
	c, _ := json.Marshal(code)
	return b.add(step{kind: stepError, data: `{"code":` + string(c) + `,"message":` + quote(message) + `}`})
}

// Chunk sends `data: <payload>` with payload verbatim.
func (b *ReplyBuilder) Chunk(payload string) *ReplyBuilder {
	return b.add(step{kind: stepChunk, data: payload})
}

// Raw writes bytes verbatim, without any framing.
func (b *ReplyBuilder) Raw(s string) *ReplyBuilder {
	return b.add(step{kind: stepRaw, data: s})
}

// Comment sends an SSE comment line (": text").
func (b *ReplyBuilder) Comment(text string) *ReplyBuilder {
	return b.add(step{kind: stepComment, data: text, count: 1})
}

// KeepAlive sends n ": OPENROUTER PROCESSING" comments, each its own event.
func (b *ReplyBuilder) KeepAlive(n int) *ReplyBuilder {
	return b.add(step{kind: stepComment, data: "OPENROUTER PROCESSING", count: n})
}

// Pause sends nothing for d (ended early when the client goes away).
func (b *ReplyBuilder) Pause(d time.Duration) *ReplyBuilder {
	return b.add(step{kind: stepPause, delay: d})
}

// Pace waits d before every later event (0 turns pacing off).
func (b *ReplyBuilder) Pace(d time.Duration) *ReplyBuilder {
	return b.add(step{kind: stepPace, delay: d})
}

// Hold sends nothing until release is closed (ended early when the client
// goes away): a test decides when the rest of the reply arrives.
func (b *ReplyBuilder) Hold(release <-chan struct{}) *ReplyBuilder {
	return b.add(step{kind: stepHold, hold: release})
}

// Cut aborts the connection mid-stream, as a dropped connection would.
func (b *ReplyBuilder) Cut() *ReplyBuilder { return b.add(step{kind: stepCut}) }

// Stall keeps the connection open and silent until the client goes away
// (or the server closes).
func (b *ReplyBuilder) Stall() *ReplyBuilder { return b.add(step{kind: stepStall}) }

// NoDone leaves out the final `data: [DONE]`.
func (b *ReplyBuilder) NoDone() *ReplyBuilder {
	b.noDone = true
	return b
}

func (b *ReplyBuilder) respond(s *Server, w http.ResponseWriter, r *http.Request, req Request) {
	genID := "gen-llmtest-" + strconv.Itoa(req.Seq)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Generation-Id", genID)
	for _, kv := range b.headers {
		h.Set(kv[0], kv[1])
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	model := req.Chat.Model
	if model == "" {
		model = "llmtest/model"
	}
	env := `{"id":` + quote(genID) + `,"provider":"llmtest","model":` + quote(model) +
		`,"object":"chat.completion.chunk","created":` + strconv.Itoa(Created)
	var pace time.Duration
	var buf bytes.Buffer
	send := func(p []byte) bool {
		if pace > 0 && s.waitGone(r, pace) {
			return false
		}
		if _, err := w.Write(p); err != nil {
			return false
		}
		flush()
		return true
	}
	data := func(payload string) bool {
		buf.Reset()
		buf.WriteString("data: ")
		buf.WriteString(payload)
		buf.WriteString("\n\n")
		return send(buf.Bytes())
	}
	for _, st := range b.steps {
		ok := true
		switch st.kind {
		case stepDelta:
			ok = data(env + `,"choices":[{"index":0,"delta":` + st.data + `,"finish_reason":null,"native_finish_reason":null}]}`)
		case stepFinish:
			fr := quote(st.data)
			ok = data(env + `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":` + fr +
				`,"native_finish_reason":` + fr + `}]}`)
		case stepUsage:
			ok = data(env + `,"choices":[],"usage":` + st.data + `}`)
		case stepError:
			data(env + `,"error":` + st.data + `,"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":"error"}]}`)
			return
		case stepChunk:
			ok = data(st.data)
		case stepRaw:
			ok = send([]byte(st.data))
		case stepComment:
			line := []byte(": " + st.data + "\n\n")
			for i := 0; i < st.count && ok; i++ {
				ok = send(line)
			}
		case stepPause:
			ok = !s.waitGone(r, st.delay)
		case stepPace:
			pace = st.delay
		case stepHold:
			select {
			case <-st.hold:
			case <-r.Context().Done():
				ok = false
			case <-s.closed:
				ok = false
			}
		case stepCut:
			// net/http closes the connection without finishing the chunked body.
			panic(http.ErrAbortHandler)
		case stepStall:
			s.waitGone(r, 0)
			// Closing the server must not look like a clean end of stream.
			panic(http.ErrAbortHandler)
		}
		if !ok {
			return
		}
	}
	if !b.noDone {
		data("[DONE]")
	}
}

// StatusBuilder scripts a non-streaming HTTP response (usually an error).
type StatusBuilder struct {
	code        int
	headers     [][2]string
	body        string
	contentType string
	set         bool
}

// Status starts a response with this HTTP status. Without Body it carries
// OpenRouter's error shape {"error":{"code":N,"message":"<status text>"}}.
func Status(code int) *StatusBuilder { return &StatusBuilder{code: code} }

// Header sets a response header (e.g. Retry-After).
func (b *StatusBuilder) Header(key, value string) *StatusBuilder {
	b.headers = append(b.headers, [2]string{key, value})
	return b
}

// Body sets a JSON body verbatim.
func (b *StatusBuilder) Body(s string) *StatusBuilder {
	b.body, b.contentType, b.set = s, "application/json", true
	return b
}

// Message sets the OpenRouter-shaped JSON error body with this message.
func (b *StatusBuilder) Message(msg string) *StatusBuilder {
	return b.Body(fmt.Sprintf(`{"error":{"code":%d,"message":%s}}`, b.code, quote(msg)))
}

// HTML sets an HTML body (as a proxy's error page would be).
func (b *StatusBuilder) HTML(s string) *StatusBuilder {
	b.body, b.contentType, b.set = s, "text/html; charset=utf-8", true
	return b
}

func (b *StatusBuilder) respond(_ *Server, w http.ResponseWriter, _ *http.Request, _ Request) {
	body, ct := b.body, b.contentType
	if !b.set {
		body = fmt.Sprintf(`{"error":{"code":%d,"message":%s}}`, b.code, quote(http.StatusText(b.code)))
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	for _, kv := range b.headers {
		w.Header().Set(kv[0], kv[1])
	}
	w.WriteHeader(b.code)
	_, _ = w.Write([]byte(body))
}

// quote JSON-encodes s without HTML escaping.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// split cuts s into n pieces of nearly equal rune counts (fewer if s is short;
// always at least one, possibly empty).
func split(s string, n int) []string {
	r := []rune(s)
	if n > len(r) {
		n = max(len(r), 1)
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

// Render returns the bytes this reply streams as the answer to request
// number seq for model (the X-Generation-Id is "gen-llmtest-<seq>"), for
// benchmarks and tests that read a stream from memory. Pause and Pace add
// their delays; a reply with Cut or Stall cannot be rendered and panics.
func (b *ReplyBuilder) Render(seq int, model string) []byte {
	for _, st := range b.steps {
		if st.kind == stepCut || st.kind == stepStall {
			panic("llmtest: Render of a reply that cuts or stalls")
		}
	}
	s := &Server{closed: make(chan struct{})}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/chat/completions", nil)
	b.respond(s, rec, r, Request{Seq: seq, Chat: ChatRequest{Model: model}})
	return rec.Body.Bytes()
}
