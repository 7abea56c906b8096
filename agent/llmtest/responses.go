package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ResponsesServer is a fake OpenAI Responses API for third-party agents that
// speak it (Codex, and so codex-acp, which no longer accepts chat
// completions: `wire_api = "chat"` is refused). Configure a Codex model
// provider with base_url = URL() and wire_api = "responses". It serves POST
// {URL()}/responses as SSE.
//
// Loop requests — every streaming POST …/responses — take the enqueued
// replies in order; any other request gets a 404.
//
//	srv := llmtest.NewResponsesServer(t)
//	srv.Enqueue(llmtest.ResponsesReply().FunctionCall("call_1", "update_plan", `{"plan":[…]}`))
//	srv.Enqueue(llmtest.ResponsesReply().Text("Done."))
type ResponsesServer struct{ f *fake }

// NewResponsesServer starts a server; t.Cleanup closes it. t may be nil (then call Close).
func NewResponsesServer(t testing.TB) *ResponsesServer {
	return &ResponsesServer{f: newFake(t, responsesLoop, notFound{})}
}

func responsesLoop(r APIRequest) bool {
	return r.Method == http.MethodPost && pathIs(r.Path, "/v1/responses") && r.Get("stream").Bool()
}

// URL is the provider's base_url, e.g. http://127.0.0.1:41234/v1.
func (s *ResponsesServer) URL() string { return s.f.hs.URL + "/v1" }

// Close stops the server; it is idempotent.
func (s *ResponsesServer) Close() { s.f.Close() }

// Enqueue appends replies, one per future loop request.
func (s *ResponsesServer) Enqueue(rs ...*ResponseReply) {
	for _, r := range rs {
		s.f.enqueue(r)
	}
}

// SetDefault sets the reply once the script is used up (without one: a 500).
func (s *ResponsesServer) SetDefault(r *ResponseReply) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.def = r
}

// Pending is the number of enqueued replies not used yet.
func (s *ResponsesServer) Pending() int { return s.f.pending() }

// Requests returns every request so far.
func (s *ResponsesServer) Requests() []APIRequest { return s.f.snapshot(false) }

// LoopRequests returns the loop requests so far.
func (s *ResponsesServer) LoopRequests() []APIRequest { return s.f.snapshot(true) }

// WaitLoop waits until n loop requests arrived and returns them.
func (s *ResponsesServer) WaitLoop(n int, timeout time.Duration) ([]APIRequest, error) {
	return s.f.waitLoop(n, timeout)
}

type responsesItem struct {
	kind       string // "reasoning", "message", "function_call"
	text       string
	callID     string
	name, args string
}

// ResponseReply scripts one response: its output items in order.
type ResponseReply struct {
	items      []responsesItem
	in, out    int
	pace       time.Duration
	stallAfter int
	failCode   string
	failMsg    string
}

// ResponsesReply starts an empty response.
func ResponsesReply() *ResponseReply { return &ResponseReply{in: 100, out: 10, stallAfter: -1} }

// Reasoning adds a reasoning item whose summary is text (streamed as one
// response.reasoning_summary_text.delta).
func (r *ResponseReply) Reasoning(text string) *ResponseReply {
	r.items = append(r.items, responsesItem{kind: "reasoning", text: text})
	return r
}

// Text adds an assistant message item (one response.output_text.delta).
func (r *ResponseReply) Text(text string) *ResponseReply {
	r.items = append(r.items, responsesItem{kind: "message", text: text})
	return r
}

// FunctionCall adds a function_call item calling name with args (a JSON
// object, sent as the string Codex expects).
func (r *ResponseReply) FunctionCall(callID, name, args string) *ResponseReply {
	r.items = append(r.items, responsesItem{kind: "function_call", callID: callID, name: name, args: string(rawJSON(args))})
	return r
}

// Usage sets the token counts of response.completed.
func (r *ResponseReply) Usage(in, out int) *ResponseReply {
	r.in, r.out = in, out
	return r
}

// Pace waits d before every event of the stream.
func (r *ResponseReply) Pace(d time.Duration) *ResponseReply {
	r.pace = d
	return r
}

// Stall streams the items added so far, then holds the stream open without
// completing it until the client goes away (for cancellation tests).
func (r *ResponseReply) Stall() *ResponseReply {
	r.stallAfter = len(r.items)
	return r
}

// Failed ends the stream with response.failed carrying this error code
// (e.g. "rate_limit_exceeded", "context_length_exceeded") and message.
func (r *ResponseReply) Failed(code, message string) *ResponseReply {
	r.failCode, r.failMsg = code, message
	return r
}

func (it responsesItem) full(id string) map[string]any {
	switch it.kind {
	case "reasoning":
		return map[string]any{"type": "reasoning", "id": id, "summary": []any{map[string]any{"type": "summary_text", "text": it.text}}}
	case "function_call":
		return map[string]any{"type": "function_call", "id": id, "call_id": it.callID, "name": it.name, "arguments": it.args, "status": "completed"}
	default:
		return map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": it.text, "annotations": []any{}}}}
	}
}

func (r *ResponseReply) respond(w http.ResponseWriter, hr *http.Request, req APIRequest, closed <-chan struct{}) {
	s := startSSE(w, hr, closed)
	s.pace = r.pace
	respID := "resp_llmtest_" + strconv.Itoa(req.Seq)
	model := req.Get("model").String()
	if !s.event("response.created", map[string]any{"type": "response.created",
		"response": map[string]any{"id": respID, "object": "response", "model": model, "status": "in_progress", "output": []any{}}}) {
		return
	}
	for i, it := range r.items {
		if i == r.stallAfter {
			s.stall()
		}
		id := map[string]string{"reasoning": "rs_", "message": "msg_", "function_call": "fc_"}[it.kind] + strconv.Itoa(req.Seq) + "_" + strconv.Itoa(i)
		added := it.full(id)
		switch it.kind {
		case "reasoning":
			added["summary"] = []any{}
		case "message":
			added["content"], added["status"] = []any{}, "in_progress"
		case "function_call":
			added["arguments"], added["status"] = "", "in_progress"
		}
		if !s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": added}) {
			return
		}
		ok := true
		switch it.kind {
		case "reasoning":
			ok = s.event("response.reasoning_summary_part.added", map[string]any{"type": "response.reasoning_summary_part.added",
				"item_id": id, "output_index": i, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}}) &&
				s.event("response.reasoning_summary_text.delta", map[string]any{"type": "response.reasoning_summary_text.delta",
					"item_id": id, "output_index": i, "summary_index": 0, "delta": it.text})
		case "message":
			ok = s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": id, "output_index": i, "content_index": 0, "delta": it.text})
		case "function_call":
			ok = s.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta",
				"item_id": id, "output_index": i, "delta": it.args})
		}
		if !ok || !s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it.full(id)}) {
			return
		}
	}
	if r.stallAfter == len(r.items) {
		s.stall()
	}
	if r.failCode != "" {
		s.event("response.failed", map[string]any{"type": "response.failed", "response": map[string]any{"id": respID, "status": "failed",
			"error": map[string]any{"code": r.failCode, "message": r.failMsg}}})
		return
	}
	s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID, "object": "response", "model": model, "status": "completed",
		"usage": map[string]any{"input_tokens": r.in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": r.out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": r.in + r.out}}})
}

type notFound struct{}

func (notFound) respond(w http.ResponseWriter, r *http.Request, _ APIRequest, _ <-chan struct{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error",
		"message": "llmtest: not served: " + r.Method + " " + strings.SplitN(r.URL.RequestURI(), "?", 2)[0]}})
}
