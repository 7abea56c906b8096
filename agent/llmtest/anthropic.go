package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// AnthropicServer is a fake Anthropic Messages API for third-party agents
// that speak it (Claude Code, and so the claude-code-acp and claude-agent-acp
// ACP adapters): point ANTHROPIC_BASE_URL at URL(). It serves POST
// /v1/messages (SSE when the body says "stream": true, else one JSON
// message) and POST /v1/messages/count_tokens.
//
// Loop requests — streaming requests that offer tools, i.e. the agent's own
// turns and its subagents' — take the enqueued replies in order. Every other
// request (Claude Code's side calls: a git-history summary, a one-token
// probe, token counts) gets the side reply, by default the text "ok".
//
//	srv := llmtest.NewAnthropicServer(t)
//	srv.Enqueue(llmtest.AnthropicReply().Text("Planning.").ToolUse("toolu_1", "TodoWrite", `{"todos":[…]}`))
//	srv.Enqueue(llmtest.AnthropicReply().Text("Done."))
type AnthropicServer struct{ f *fake }

// NewAnthropicServer starts a server; t.Cleanup closes it. t may be nil (then call Close).
func NewAnthropicServer(t testing.TB) *AnthropicServer {
	return &AnthropicServer{f: newFake(t, anthropicLoop, AnthropicReply().Text("ok"))}
}

func anthropicLoop(r APIRequest) bool {
	return r.Method == http.MethodPost && pathIs(r.Path, "/v1/messages") &&
		r.Get("stream").Bool() && len(r.Get("tools").Array()) > 0
}

// pathIs compares a request URI's path, without its query, to p.
func pathIs(uri, p string) bool {
	path, _, _ := strings.Cut(uri, "?")
	return path == p
}

// URL is the base URL for ANTHROPIC_BASE_URL, e.g. http://127.0.0.1:41234.
func (s *AnthropicServer) URL() string { return s.f.hs.URL }

// Close stops the server; it is idempotent.
func (s *AnthropicServer) Close() { s.f.Close() }

// Enqueue appends replies, one per future loop request.
func (s *AnthropicServer) Enqueue(rs ...*MessageReply) {
	for _, r := range rs {
		s.f.enqueue(r)
	}
}

// EnqueueError makes the next loop request fail with this HTTP status and
// Anthropic error type (e.g. 529, "overloaded_error").
func (s *AnthropicServer) EnqueueError(status int, errType, message string) {
	s.f.enqueue(anthropicError{status, errType, message})
}

// SetDefault sets the reply for loop requests once the script is used up
// (without one they get a 500).
func (s *AnthropicServer) SetDefault(r *MessageReply) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.def = r
}

// SetSide sets the reply to every request that is not a loop request.
func (s *AnthropicServer) SetSide(r *MessageReply) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.side = r
}

// Pending is the number of enqueued replies not used yet.
func (s *AnthropicServer) Pending() int { return s.f.pending() }

// Requests returns every request so far, side requests included.
func (s *AnthropicServer) Requests() []APIRequest { return s.f.snapshot(false) }

// LoopRequests returns the loop requests so far.
func (s *AnthropicServer) LoopRequests() []APIRequest { return s.f.snapshot(true) }

// WaitLoop waits until n loop requests arrived and returns them.
func (s *AnthropicServer) WaitLoop(n int, timeout time.Duration) ([]APIRequest, error) {
	return s.f.waitLoop(n, timeout)
}

type anthropicBlock struct {
	kind  string // "text", "thinking", "tool_use"
	text  string
	id    string
	name  string
	input json.RawMessage
}

// MessageReply scripts one assistant message: its content blocks in order,
// then its stop reason.
type MessageReply struct {
	blocks     []anthropicBlock
	stop       string
	in, out    int
	pace       time.Duration
	stallAfter int // stall before block n (−1: never)
}

// AnthropicReply starts an empty assistant message.
func AnthropicReply() *MessageReply { return &MessageReply{in: 100, out: 10, stallAfter: -1} }

// Text adds a text block, streamed as one text_delta.
func (m *MessageReply) Text(s string) *MessageReply {
	m.blocks = append(m.blocks, anthropicBlock{kind: "text", text: s})
	return m
}

// Thinking adds a thinking block (thinking_delta, then a signature_delta).
func (m *MessageReply) Thinking(s string) *MessageReply {
	m.blocks = append(m.blocks, anthropicBlock{kind: "thinking", text: s})
	return m
}

// ToolUse adds a tool_use block calling name with input (a JSON object),
// streamed as one input_json_delta. The stop reason becomes "tool_use".
func (m *MessageReply) ToolUse(id, name, input string) *MessageReply {
	m.blocks = append(m.blocks, anthropicBlock{kind: "tool_use", id: id, name: name, input: rawJSON(input)})
	return m
}

// Stop sets the stop reason ("end_turn", "tool_use", "max_tokens", …); by
// default it is "tool_use" when the message calls a tool, else "end_turn".
func (m *MessageReply) Stop(reason string) *MessageReply {
	m.stop = reason
	return m
}

// Usage sets the input and output token counts the message reports.
func (m *MessageReply) Usage(in, out int) *MessageReply {
	m.in, m.out = in, out
	return m
}

// Pace waits d before every event of the stream.
func (m *MessageReply) Pace(d time.Duration) *MessageReply {
	m.pace = d
	return m
}

// Stall streams the blocks added so far, then holds the stream open without
// finishing it until the client goes away (for cancellation tests).
func (m *MessageReply) Stall() *MessageReply {
	m.stallAfter = len(m.blocks)
	return m
}

func (m *MessageReply) stopReason() string {
	if m.stop != "" {
		return m.stop
	}
	for _, b := range m.blocks {
		if b.kind == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (b anthropicBlock) full() map[string]any {
	switch b.kind {
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.text, "signature": "llmtest-signature"}
	case "tool_use":
		return map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
	default:
		return map[string]any{"type": "text", "text": b.text}
	}
}

func (m *MessageReply) respond(w http.ResponseWriter, r *http.Request, req APIRequest, closed <-chan struct{}) {
	if pathIs(req.Path, "/v1/messages/count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"input_tokens":` + strconv.Itoa(m.in) + `}`))
		return
	}
	if r.Method != http.MethodPost || !pathIs(req.Path, "/v1/messages") {
		anthropicError{http.StatusNotFound, "not_found_error", "llmtest: only POST /v1/messages and /v1/messages/count_tokens are served"}.respond(w, r, req, closed)
		return
	}
	model := req.Get("model").String()
	id := "msg_llmtest_" + strconv.Itoa(req.Seq)
	usage := map[string]any{"input_tokens": m.in, "output_tokens": m.out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Get("stream").Bool() {
		content := make([]any, 0, len(m.blocks))
		for _, b := range m.blocks {
			content = append(content, b.full())
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": m.stopReason(), "stop_sequence": nil, "usage": usage})
		return
	}
	s := startSSE(w, r, closed)
	s.pace = m.pace
	start := map[string]any{"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": m.in, "output_tokens": 1}}
	if !s.event("message_start", map[string]any{"type": "message_start", "message": start}) {
		return
	}
	for i, b := range m.blocks {
		if i == m.stallAfter {
			s.stall()
		}
		var open map[string]any
		var deltas []map[string]any
		switch b.kind {
		case "thinking":
			open = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
			deltas = []map[string]any{{"type": "thinking_delta", "thinking": b.text}, {"type": "signature_delta", "signature": "llmtest-signature"}}
		case "tool_use":
			open = map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}
			deltas = []map[string]any{{"type": "input_json_delta", "partial_json": string(b.input)}}
		default:
			open = map[string]any{"type": "text", "text": ""}
			deltas = []map[string]any{{"type": "text_delta", "text": b.text}}
		}
		if !s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": open}) {
			return
		}
		for _, d := range deltas {
			if !s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}) {
				return
			}
		}
		if !s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if m.stallAfter == len(m.blocks) {
		s.stall()
	}
	if !s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": m.stopReason(), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": m.out}}) {
		return
	}
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

type anthropicError struct {
	status        int
	kind, message string
}

func (e anthropicError) respond(w http.ResponseWriter, _ *http.Request, _ APIRequest, _ <-chan struct{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": e.kind, "message": e.message}})
}
