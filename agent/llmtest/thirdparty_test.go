package llmtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// namedEvent is one SSE event of a third-party fake: its name and data.
type namedEvent struct {
	name string
	data gjson.Result
}

func namedEvents(t *testing.T, body string) []namedEvent {
	t.Helper()
	var out []namedEvent
	for _, e := range events(t, body) {
		name, data, ok := strings.Cut(e, "\n")
		require.True(t, ok, e)
		require.True(t, strings.HasPrefix(name, "event: "), e)
		require.True(t, strings.HasPrefix(data, "data: "), e)
		d := gjson.Parse(strings.TrimPrefix(data, "data: "))
		require.Equal(t, strings.TrimPrefix(name, "event: "), d.Get("type").String(), "event name is the data's type")
		out = append(out, namedEvent{strings.TrimPrefix(name, "event: "), d})
	}
	return out
}

func postTo(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const loopBody = `{"model":"claude-x","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`

func TestAnthropicStreamsScriptedBlocks(t *testing.T) {
	srv := NewAnthropicServer(t)
	srv.Enqueue(AnthropicReply().Thinking("hmm").Text("Hello").ToolUse("toolu_1", "Bash", `{"command":"ls -l"}`).Usage(42, 7))
	resp := postTo(t, context.Background(), srv.URL()+"/v1/messages?beta=true", loopBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ev := namedEvents(t, readAll(t, resp))

	var names []string
	for _, e := range ev {
		names = append(names, e.name)
	}
	assert.Equal(t, []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)
	assert.Equal(t, "msg_llmtest_1", ev[0].data.Get("message.id").String())
	assert.Equal(t, "claude-x", ev[0].data.Get("message.model").String())
	assert.Equal(t, int64(42), ev[0].data.Get("message.usage.input_tokens").Int())
	assert.Equal(t, "thinking", ev[1].data.Get("content_block.type").String())
	assert.Equal(t, "hmm", ev[2].data.Get("delta.thinking").String())
	assert.Equal(t, "signature_delta", ev[3].data.Get("delta.type").String())
	assert.Equal(t, "Hello", ev[6].data.Get("delta.text").String())
	assert.Equal(t, int64(1), ev[6].data.Get("index").Int())
	assert.Equal(t, "toolu_1", ev[8].data.Get("content_block.id").String())
	assert.Equal(t, "Bash", ev[8].data.Get("content_block.name").String())
	assert.JSONEq(t, `{"command":"ls -l"}`, ev[9].data.Get("delta.partial_json").String())
	assert.Equal(t, "tool_use", ev[11].data.Get("delta.stop_reason").String(), "a message calling a tool stops for tool_use")
	assert.Equal(t, int64(7), ev[11].data.Get("usage.output_tokens").Int())

	reqs := srv.LoopRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, 1, reqs[0].LoopSeq)
	assert.Equal(t, "/v1/messages?beta=true", reqs[0].Path)
	assert.Equal(t, "hi", reqs[0].Get("messages.0.content").String())
	assert.Equal(t, 0, srv.Pending())
}

func TestAnthropicSideRequestsDoNotConsumeTheScript(t *testing.T) {
	srv := NewAnthropicServer(t)
	srv.Enqueue(AnthropicReply().Text("scripted"))
	ctx := context.Background()

	// A streaming request without tools (Claude Code's summaries), a
	// non-streaming probe and a token count are side requests.
	side := namedEvents(t, readAll(t, postTo(t, ctx, srv.URL()+"/v1/messages", `{"model":"haiku","stream":true,"messages":[]}`)))
	assert.Equal(t, "ok", side[2].data.Get("delta.text").String())
	assert.Equal(t, "end_turn", side[4].data.Get("delta.stop_reason").String())
	probe := gjson.Parse(readAll(t, postTo(t, ctx, srv.URL()+"/v1/messages", `{"model":"haiku","max_tokens":1,"tools":[{"name":"x"}],"messages":[]}`)))
	assert.Equal(t, "message", probe.Get("type").String())
	assert.Equal(t, "ok", probe.Get("content.0.text").String())
	count := gjson.Parse(readAll(t, postTo(t, ctx, srv.URL()+"/v1/messages/count_tokens?beta=true", `{"messages":[]}`)))
	assert.Equal(t, int64(100), count.Get("input_tokens").Int())
	assert.Equal(t, 1, srv.Pending(), "side requests leave the script alone")

	loop := namedEvents(t, readAll(t, postTo(t, ctx, srv.URL()+"/v1/messages", loopBody)))
	assert.Equal(t, "scripted", loop[2].data.Get("delta.text").String())

	all := srv.Requests()
	require.Len(t, all, 4)
	assert.Equal(t, []bool{false, false, false, true}, []bool{all[0].Loop(), all[1].Loop(), all[2].Loop(), all[3].Loop()})
	assert.Equal(t, 4, all[3].Seq)

	// Used up: a loop request gets a 500 in Anthropic's error shape, unless a default is set.
	resp := postTo(t, ctx, srv.URL()+"/v1/messages", loopBody)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Contains(t, gjson.Parse(readAll(t, resp)).Get("error.message").String(), "no scripted response for loop request 2")
	srv.SetDefault(AnthropicReply().Text("again"))
	again := namedEvents(t, readAll(t, postTo(t, ctx, srv.URL()+"/v1/messages", loopBody)))
	assert.Equal(t, "again", again[2].data.Get("delta.text").String())

	srv.EnqueueError(529, "overloaded_error", "Overloaded")
	resp = postTo(t, ctx, srv.URL()+"/v1/messages", loopBody)
	assert.Equal(t, 529, resp.StatusCode)
	body := gjson.Parse(readAll(t, resp))
	assert.Equal(t, "overloaded_error", body.Get("error.type").String())
	assert.Equal(t, "error", body.Get("type").String())
}

func TestAnthropicWaitLoopAndStall(t *testing.T) {
	srv := NewAnthropicServer(t)
	srv.Enqueue(AnthropicReply().Text("partial").Stall().Text("never"))
	_, err := srv.WaitLoop(1, 50*time.Millisecond)
	require.Error(t, err, "no loop request yet")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := postTo(t, ctx, srv.URL()+"/v1/messages", loopBody)
	reqs, err := srv.WaitLoop(1, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, reqs, 1)

	// The stream delivers what came before Stall, then nothing until the client gives up.
	buf := make([]byte, 4096)
	var got strings.Builder
	for !strings.Contains(got.String(), `"partial"`) {
		n, err := resp.Body.Read(buf)
		require.NoError(t, err)
		got.Write(buf[:n])
	}
	assert.NotContains(t, got.String(), "never")
	assert.NotContains(t, got.String(), "message_stop")
	cancel()
	_, err = io.ReadAll(resp.Body)
	require.Error(t, err, "a stalled stream never ends cleanly")
}

func TestResponsesStreamsScriptedItems(t *testing.T) {
	srv := NewResponsesServer(t)
	srv.Enqueue(ResponsesReply().Reasoning("think").Text("Hi").FunctionCall("call_1", "update_plan", `{"plan":[{"step":"a","status":"pending"}]}`).Usage(50, 5))
	require.True(t, strings.HasSuffix(srv.URL(), "/v1"))
	resp := postTo(t, context.Background(), srv.URL()+"/responses", `{"model":"gpt-5.4","stream":true,"input":[]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ev := namedEvents(t, readAll(t, resp))
	var names []string
	for _, e := range ev {
		names = append(names, e.name)
	}
	assert.Equal(t, []string{"response.created",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.output_item.done",
		"response.output_item.added", "response.output_text.delta", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.output_item.done",
		"response.completed"}, names)
	assert.Equal(t, "resp_llmtest_1", ev[0].data.Get("response.id").String())
	assert.Equal(t, "think", ev[3].data.Get("delta").String())
	assert.Equal(t, int64(0), ev[3].data.Get("summary_index").Int())
	assert.Equal(t, "think", ev[4].data.Get("item.summary.0.text").String())
	assert.Equal(t, "Hi", ev[6].data.Get("delta").String())
	assert.Equal(t, "Hi", ev[7].data.Get("item.content.0.text").String())
	assert.Equal(t, "output_text", ev[7].data.Get("item.content.0.type").String())
	call := ev[10].data.Get("item")
	assert.Equal(t, "function_call", call.Get("type").String())
	assert.Equal(t, "call_1", call.Get("call_id").String())
	assert.Equal(t, "update_plan", call.Get("name").String())
	assert.Equal(t, gjson.String, call.Get("arguments").Type, "arguments travel as a JSON string")
	assert.JSONEq(t, `{"plan":[{"step":"a","status":"pending"}]}`, call.Get("arguments").String())
	assert.Equal(t, int64(50), ev[11].data.Get("response.usage.input_tokens").Int())
	assert.Equal(t, int64(55), ev[11].data.Get("response.usage.total_tokens").Int())

	// Anything but a streaming POST …/responses is a 404 and not a loop request.
	nf := postTo(t, context.Background(), srv.URL()+"/models", `{}`)
	assert.Equal(t, http.StatusNotFound, nf.StatusCode)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.True(t, reqs[0].Loop())
	assert.False(t, reqs[1].Loop())
}

func TestResponsesFailed(t *testing.T) {
	srv := NewResponsesServer(t)
	srv.Enqueue(ResponsesReply().Text("partial").Failed("rate_limit_exceeded", "try again in 1s"))
	ev := namedEvents(t, readAll(t, postTo(t, context.Background(), srv.URL()+"/responses", `{"stream":true}`)))
	last := ev[len(ev)-1]
	assert.Equal(t, "response.failed", last.name)
	assert.Equal(t, "rate_limit_exceeded", last.data.Get("response.error.code").String())
	for _, e := range ev {
		assert.NotEqual(t, "response.completed", e.name)
	}
}

func TestThirdPartyScriptsRejectInvalidJSON(t *testing.T) {
	assert.Panics(t, func() { AnthropicReply().ToolUse("t", "Bash", `{"command":`) })
	assert.Panics(t, func() { ResponsesReply().FunctionCall("c", "exec_command", `not json`) })
}
