package openrouter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/tools"
)

const testKey = "sk-or-v1-secret-test-key-0123456789"

// testProvider is a provider against srv whose retry waits are recorded
// instead of slept.
type testProvider struct {
	*Provider
	mu     sync.Mutex
	sleeps []time.Duration
}

func newTestProvider(t *testing.T, srv *llmtest.Server, mod ...func(*Config)) *testProvider {
	t.Helper()
	tp := &testProvider{}
	cfg := Config{
		BaseURL: srv.URL(),
		APIKey:  testKey,
		Backoff: func(attempt int) time.Duration { return time.Duration(attempt) * time.Millisecond },
		Sleep: func(ctx context.Context, d time.Duration) error {
			tp.mu.Lock()
			tp.sleeps = append(tp.sleeps, d)
			tp.mu.Unlock()
			return ctx.Err()
		},
		IdleTimeout: 5 * time.Second,
	}
	for _, m := range mod {
		m(&cfg)
	}
	tp.Provider = New(cfg)
	return tp
}

func (tp *testProvider) slept() []time.Duration {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]time.Duration(nil), tp.sleeps...)
}

type deltaLog struct {
	mu     sync.Mutex
	deltas []agent.Delta
}

func (l *deltaLog) add(d agent.Delta) {
	l.mu.Lock()
	l.deltas = append(l.deltas, d)
	l.mu.Unlock()
}

func (l *deltaLog) all() []agent.Delta {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]agent.Delta(nil), l.deltas...)
}

// joined is the log with consecutive text deltas of one kind joined: what
// the stream showed, whichever deltas the reads coalesced.
func (l *deltaLog) joined() []agent.Delta {
	var out []agent.Delta
	for _, d := range l.all() {
		if n := len(out); n > 0 && out[n-1].Kind == d.Kind && (d.Kind == agent.DeltaContent || d.Kind == agent.DeltaReasoning) {
			out[n-1].Text += d.Text
			continue
		}
		out = append(out, d)
	}
	return out
}

func (l *deltaLog) kinds(k agent.DeltaKind) []agent.Delta {
	var out []agent.Delta
	for _, d := range l.all() {
		if d.Kind == k {
			out = append(out, d)
		}
	}
	return out
}

func userRequest(text string) agent.Request {
	return agent.Request{Model: "test/model", Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: "You are Fido."},
		{Role: agent.RoleUser, Content: text},
	}}
}

//lint:ignore ST1008 the tests read the response, its error and the deltas in this order
func stream(t *testing.T, p agent.Provider, req agent.Request) (agent.Response, error, *deltaLog) {
	t.Helper()
	log := &deltaLog{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := p.Stream(ctx, req, log.add)
	return resp, err, log
}

func providerError(t *testing.T, err error) *agent.ProviderError {
	t.Helper()
	var pe *agent.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.NotContains(t, pe.Message, testKey)
	assert.NotContains(t, pe.Error(), testKey)
	assert.NotContains(t, pe.Message, "\n", "one line for the user")
	return pe
}

func TestStreamReasoningAndContent(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().Role().Reasoning("Let me ").Reasoning("think.").Content("Hel").Content("lo").
		Finish("stop").Usage(100, 20, 60, 0.0012))
	p := newTestProvider(t, srv)
	resp, err, log := stream(t, p, userRequest("hi"))
	require.NoError(t, err)
	// However the chunks were read (one delta each, or several coalesced
	// into one), the text arrives in order, reasoning first.
	assert.Equal(t, []agent.Delta{
		{Kind: agent.DeltaReasoning, Text: "Let me think."},
		{Kind: agent.DeltaContent, Text: "Hello"},
	}, log.joined())
	assert.Equal(t, agent.Message{Role: agent.RoleAssistant, Content: "Hello", Reasoning: "Let me think."}, resp.Message)
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Equal(t, agent.Usage{Calls: 1, Input: 100, Output: 20, CacheRead: 60, Cost: 0.0012}, resp.Usage)
	assert.Equal(t, "gen-llmtest-1", resp.GenerationID)
	assert.Len(t, srv.Requests(), 1)
}

func TestStreamReasoningSources(t *testing.T) {
	tests := []struct {
		name  string
		reply *llmtest.ReplyBuilder
		want  string
	}{
		{"reasoning_content", llmtest.Reply().ReasoningContent("deep").Content("x"), "deep"},
		{"reasoning wins over reasoning_content",
			llmtest.Reply().Chunk(`{"id":"g","choices":[{"index":0,"delta":{"reasoning":"a","reasoning_content":"a"}}]}`).Content("x"), "a"},
		{"details only", llmtest.Reply().ReasoningDetails("", `[{"type":"reasoning.text","text":"from details","index":0}]`).Content("x"), "from details"},
		{"summary details only", llmtest.Reply().ReasoningDetails("", `[{"type":"reasoning.summary","summary":"sum","index":0}]`).Content("x"), "sum"},
		{"details and reasoning are not shown twice",
			llmtest.Reply().ReasoningDetails("once", `[{"type":"reasoning.text","text":"once","index":0}]`).Content("x"), "once"},
		{"encrypted details show nothing",
			llmtest.Reply().ReasoningDetails("", `[{"type":"reasoning.encrypted","data":"abc","index":0}]`).Content("x"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply.Finish("stop"))
			resp, err, log := stream(t, newTestProvider(t, srv), userRequest("hi"))
			require.NoError(t, err)
			var shown strings.Builder
			for _, d := range log.kinds(agent.DeltaReasoning) {
				shown.WriteString(d.Text)
			}
			assert.Equal(t, tt.want, shown.String())
			assert.Equal(t, tt.want, resp.Message.Reasoning)
			assert.Equal(t, "x", resp.Message.Content)
		})
	}
}

func TestStreamReasoningDetailsAccumulated(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().
		ReasoningDetails("Think ", `[{"type":"reasoning.text","text":"Think ","format":"anthropic-claude-v1","index":0}]`).
		ReasoningDetails("hard.", `[{"type":"reasoning.text","text":"hard.","index":0,"signature":"sig0"}]`).
		ReasoningDetails("", `[{"type":"reasoning.encrypted","data":"<opaque&>","id":"e1","format":"openai-responses-v1","index":1}]`).
		ReasoningDetails("More", `[{"type":"reasoning.text","text":"More","index":2,"signature":"sig2"}]`).
		Content("ok").Finish("stop"))
	resp, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "Think hard.More", resp.Message.Reasoning)
	assert.JSONEq(t, `[
		{"type":"reasoning.text","text":"Think hard.","format":"anthropic-claude-v1","index":0,"signature":"sig0"},
		{"type":"reasoning.encrypted","data":"<opaque&>","id":"e1","format":"openai-responses-v1","index":1},
		{"type":"reasoning.text","text":"More","index":2,"signature":"sig2"}]`, string(resp.Message.ReasoningDetails))
	assert.Contains(t, string(resp.Message.ReasoningDetails),
		`{"type":"reasoning.encrypted","data":"<opaque&>","id":"e1","format":"openai-responses-v1","index":1}`,
		"non-text details are passed back byte for byte")
}

func TestStreamSplitToolCalls(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().Content("Reading.").
		ToolCall("call_1", "read_file", `{"path":"a.go"}`, 3).
		ToolCall("call_2", "search", `{"pattern":"func main"}`, 4).
		Finish("stop"). // Gemini-style "stop" after tool calls
		Usage(10, 5, 0, 0))
	resp, err, log := stream(t, newTestProvider(t, srv), userRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	assert.Equal(t, []agent.ToolCall{
		{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_2", Name: "search", Arguments: `{"pattern":"func main"}`},
	}, resp.Message.ToolCalls)
	assert.Equal(t, "Reading.", resp.Message.Content)

	tc := log.kinds(agent.DeltaToolCall)
	require.Len(t, tc, 7)
	args := map[int]string{}
	for i, d := range tc {
		switch i {
		case 0:
			assert.Equal(t, "read_file", d.ToolName)
		case 3:
			assert.Equal(t, "search", d.ToolName)
		default:
			assert.Empty(t, d.ToolName, "name only on the first fragment")
		}
		args[d.ToolIndex] += d.Text
	}
	assert.Equal(t, map[int]string{0: `{"path":"a.go"}`, 1: `{"pattern":"func main"}`}, args)
	all := log.all()
	assert.Equal(t, agent.DeltaContent, all[0].Kind, "deltas keep stream order")
}

func TestStreamOddToolCallIndexes(t *testing.T) {
	tests := []struct {
		name  string
		reply *llmtest.ReplyBuilder
		want  []agent.ToolCall
	}{
		{"index -1 continues the current call", llmtest.Reply().
			ToolCallDelta(`[{"index":-1,"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"pa"}}]`).
			ToolCallDelta(`[{"index":-1,"function":{"arguments":"th\":1}"}}]`).
			ToolCallDelta(`[{"index":-1,"id":"c2","type":"function","function":{"name":"rm","arguments":"{}"}}]`),
			[]agent.ToolCall{{ID: "c1", Name: "ls", Arguments: `{"path":1}`}, {ID: "c2", Name: "rm", Arguments: `{}`}}},
		{"missing index", llmtest.Reply().
			ToolCallDelta(`[{"id":"c1","type":"function","function":{"name":"ls","arguments":""}}]`).
			ToolCallDelta(`[{"function":{"arguments":"{}"}}]`),
			[]agent.ToolCall{{ID: "c1", Name: "ls", Arguments: `{}`}}},
		{"two calls in one chunk", llmtest.Reply().
			ToolCallDelta(`[{"index":0,"id":"a","type":"function","function":{"name":"x","arguments":"{}"}},{"index":1,"id":"b","type":"function","function":{"name":"y","arguments":"{}"}}]`),
			[]agent.ToolCall{{ID: "a", Name: "x", Arguments: `{}`}, {ID: "b", Name: "y", Arguments: `{}`}}},
		{"index reused with a new id", llmtest.Reply().
			ToolCallDelta(`[{"index":0,"id":"a","type":"function","function":{"name":"x","arguments":"{}"}}]`).
			ToolCallDelta(`[{"index":0,"id":"b","type":"function","function":{"name":"y","arguments":"{}"}}]`),
			[]agent.ToolCall{{ID: "a", Name: "x", Arguments: `{}`}, {ID: "b", Name: "y", Arguments: `{}`}}},
		{"empty arguments become {}", llmtest.Reply().ToolCall("c", "now", "", 1),
			[]agent.ToolCall{{ID: "c", Name: "now", Arguments: `{}`}}},
		{"missing id gets one", llmtest.Reply().
			ToolCallDelta(`[{"index":0,"type":"function","function":{"name":"x","arguments":"{}"}}]`),
			[]agent.ToolCall{{ID: "call_gen-llmtest-1_0", Name: "x", Arguments: `{}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply.Finish("tool_calls"))
			resp, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Message.ToolCalls)
			assert.Equal(t, "tool_calls", resp.FinishReason)
		})
	}
}

func TestStreamToleratesCommentsAndLongKeepAlive(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().KeepAlive(450).Reasoning("r").KeepAlive(600).Content("done").
		Comment("another comment").Finish("stop").KeepAlive(3).Usage(1, 2, 0, 0.5))
	resp, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "done", resp.Message.Content)
	assert.Equal(t, "r", resp.Message.Reasoning)
	assert.Equal(t, agent.Usage{Calls: 1, Input: 1, Output: 2, Cost: 0.5}, resp.Usage)
	assert.Len(t, srv.Requests(), 1)
}

func TestStreamNonRetryableHTTPErrors(t *testing.T) {
	tests := []struct {
		name   string
		resp   *llmtest.StatusBuilder
		status int
		want   []string
	}{
		{"401", llmtest.Status(401).Message("No auth credentials found"), 401,
			[]string{"rejected the API key (401)", "OPENROUTER_API_KEY"}},
		{"402", llmtest.Status(402).Message("Insufficient credits"), 402,
			[]string{"out of credits (402)", "Insufficient credits"}},
		{"400 with provider raw", llmtest.Status(400).Body(
			`{"error":{"code":400,"message":"Provider returned error","metadata":{"provider_name":"Anthropic","raw":"{\"error\":{\"message\":\"prompt is too long\"}}"}}}`), 400,
			[]string{"rejected the request (400)", "prompt is too long", "Anthropic"}},
		{"403", llmtest.Status(403).Message("flagged by moderation"), 403, []string{"refused the request (403)", "flagged"}},
		{"404", llmtest.Status(404).Message("No endpoints found for x/y"), 404, []string{"(404)", "No endpoints found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.resp)
			srv.SetDefault(llmtest.Text("must not be requested"))
			p := newTestProvider(t, srv)
			_, err, log := stream(t, p, userRequest("hi"))
			pe := providerError(t, err)
			assert.Equal(t, tt.status, pe.Status)
			assert.False(t, pe.Retryable)
			assert.False(t, pe.Partial)
			for _, w := range tt.want {
				assert.Contains(t, pe.Message, w)
			}
			assert.Len(t, srv.Requests(), 1, "never retried")
			assert.Empty(t, p.slept())
			assert.Empty(t, log.all())
		})
	}
}

func TestStream429RetriedHonouringRetryAfter(t *testing.T) {
	date := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name    string
		first   *llmtest.StatusBuilder
		wantMin time.Duration
		wantMax time.Duration
		note    string
	}{
		{"seconds", llmtest.Status(429).Header("Retry-After", "1").Message("Rate limit exceeded"),
			time.Second, time.Second, "retrying in 1s after 429 (rate limited) (attempt 2 of 4)"},
		{"http date", llmtest.Status(429).Header("Retry-After", date), time.Second, 3 * time.Second, "after 429"},
		{"no header uses backoff", llmtest.Status(429), time.Millisecond, time.Millisecond,
			"retrying in 1ms after 429 (rate limited) (attempt 2 of 4)"},
		{"408", llmtest.Status(408), time.Millisecond, time.Millisecond, "after 408 (request timeout)"},
		{"409", llmtest.Status(409), time.Millisecond, time.Millisecond, "after 409 (conflict)"},
		{"502", llmtest.Status(502), time.Millisecond, time.Millisecond, "after 502 (bad gateway)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.first, llmtest.Text("after the wait"))
			p := newTestProvider(t, srv)
			resp, err, log := stream(t, p, userRequest("hi"))
			require.NoError(t, err)
			assert.Equal(t, "after the wait", resp.Message.Content)
			assert.Len(t, srv.Requests(), 2)
			sl := p.slept()
			require.Len(t, sl, 1)
			assert.GreaterOrEqual(t, sl[0], tt.wantMin)
			assert.LessOrEqual(t, sl[0], tt.wantMax)
			st := log.kinds(agent.DeltaStatus)
			require.Len(t, st, 1)
			assert.Contains(t, st[0].Text, tt.note)
			assert.Equal(t, agent.DeltaStatus, log.all()[0].Kind, "the note comes before the answer")
		})
	}
}

func TestStream5xxHTMLSummarizedAfterRetries(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>503 Service Temporarily Unavailable</title>
<style>body{color:red}</style></head><body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center></body></html>`
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Status(503).HTML(page))
	p := newTestProvider(t, srv)
	_, err, log := stream(t, p, userRequest("hi"))
	pe := providerError(t, err)
	assert.Equal(t, 503, pe.Status)
	assert.True(t, pe.Retryable)
	assert.Contains(t, pe.Message, "is unavailable (503): 503 Service Temporarily Unavailable")
	assert.Contains(t, pe.Message, "gave up after 3 retries")
	assert.NotContains(t, pe.Message, "<")
	assert.Len(t, srv.Requests(), 4)
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}, p.slept())
	assert.Len(t, log.kinds(agent.DeltaStatus), 3)
}

func TestStreamMaxRetriesConfig(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Status(500))
	p := newTestProvider(t, srv, func(c *Config) { c.MaxRetries = -1 })
	_, err, _ := stream(t, p, userRequest("hi"))
	pe := providerError(t, err)
	assert.Equal(t, 500, pe.Status)
	assert.Len(t, srv.Requests(), 1)
	assert.NotContains(t, pe.Message, "gave up")
}

func TestStreamLongRetryAfterIsReportedNotWaited(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Status(429).Header("Retry-After", "600"))
	p := newTestProvider(t, srv)
	_, err, _ := stream(t, p, userRequest("hi"))
	pe := providerError(t, err)
	assert.Equal(t, 10*time.Minute, pe.RetryAfter)
	assert.Contains(t, pe.Message, "rate limiting requests (429); retry after 10m0s")
	assert.Empty(t, p.slept())
	assert.Len(t, srv.Requests(), 1)
}

func TestStreamMidStreamError(t *testing.T) {
	t.Run("after deltas: reported, not retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().Content("partial ").Error("server_error", "Upstream provider crashed"))
		srv.SetDefault(llmtest.Text("must not be requested"))
		p := newTestProvider(t, srv)
		_, err, log := stream(t, p, userRequest("hi"))
		pe := providerError(t, err)
		assert.Equal(t, 0, pe.Status)
		assert.Equal(t, "server_error", pe.Code)
		assert.True(t, pe.Partial)
		assert.Contains(t, pe.Message, "mid-answer: Upstream provider crashed (server_error)")
		assert.Equal(t, []agent.Delta{{Kind: agent.DeltaContent, Text: "partial "}}, log.all())
		assert.Len(t, srv.Requests(), 1)
	})
	t.Run("before deltas: retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().KeepAlive(2).Error(502, "Bad upstream"), llmtest.Text("second try"))
		p := newTestProvider(t, srv)
		resp, err, log := stream(t, p, userRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "second try", resp.Message.Content)
		assert.Len(t, srv.Requests(), 2)
		require.Len(t, log.kinds(agent.DeltaStatus), 1)
		assert.Contains(t, log.kinds(agent.DeltaStatus)[0].Text, "after error 502")
	})
	t.Run("non-transient code not retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().Error("invalid_request", "bad tool schema"))
		_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
		pe := providerError(t, err)
		assert.False(t, pe.Retryable)
		assert.False(t, pe.Partial)
		assert.Len(t, srv.Requests(), 1)
	})
}

func TestStreamErrorAsFirstKey(t *testing.T) {
	tests := []struct {
		name  string
		reply *llmtest.ReplyBuilder
	}{
		{"alone", llmtest.Reply().Content("a").Chunk(`{"error":{"code":502,"message":"Upstream went away"}}`)},
		{"after comments", llmtest.Reply().Comment("x").KeepAlive(5).Content("a").Chunk(`{"error":{"code":502,"message":"Upstream went away"}}`)},
		{"then DONE", llmtest.Reply().Content("a").Chunk(`{"error":{"code":"502","message":"Upstream went away"}}`).Chunk("[DONE]").NoDone()},
		{"not the first key", llmtest.Reply().Content("a").Chunk(`{"object":"chat.completion.chunk","error":{"code":502,"message":"Upstream went away"},"choices":[]}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply)
			_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
			pe := providerError(t, err)
			assert.Contains(t, pe.Message, "Upstream went away (502)")
			assert.Equal(t, "502", pe.Code)
			assert.True(t, pe.Partial)
			assert.True(t, pe.Retryable)
		})
	}
}

// An `event: error` event inside a 200 stream is an error report, whatever
// the shape of its data.
func TestStreamErrorEvent(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().Content("a").Raw("event: error\ndata: {\"code\":\"overloaded\",\"message\":\"Overloaded\"}\n\n").NoDone())
	_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
	pe := providerError(t, err)
	assert.Contains(t, pe.Message, "reported an error mid-answer: Overloaded (overloaded)")
	assert.True(t, pe.Retryable)
	assert.True(t, pe.Partial)
}

// A 1 MiB delta (one SSE line far longer than the read buffer) arrives
// whole, between ordinary ones.
func TestStreamHugeDelta(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16)
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().Content("<").Content(big).Content(">").Finish("stop"))
	resp, err, log := stream(t, newTestProvider(t, srv), userRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "<"+big+">", resp.Message.Content)
	assert.Equal(t, []agent.Delta{{Kind: agent.DeltaContent, Text: "<" + big + ">"}}, log.joined())
}

func TestStreamEndings(t *testing.T) {
	tests := []struct {
		name     string
		reply    *llmtest.ReplyBuilder
		wantErr  string
		partial  bool
		requests int
	}{
		{"finish without DONE is complete", llmtest.Reply().Content("ok").Finish("stop").NoDone(), "", false, 1},
		{"finish then cut is complete", llmtest.Reply().Content("ok").Finish("length").Cut(), "", false, 1},
		{"DONE without finish is complete", llmtest.Reply().Content("ok"), "", false, 1},
		{"no DONE and no finish is cut", llmtest.Reply().Content("ok").NoDone(), "was cut before the answer finished", true, 1},
		{"cut after content", llmtest.Reply().Content("ok").Cut(), "was cut before the answer finished (unexpected EOF)", true, 1},
		{"cut before anything is retried", llmtest.Reply().KeepAlive(1).Cut(), "was cut before the answer finished", false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply)
			srv.SetDefault(llmtest.Reply().Cut())
			resp, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
			assert.Len(t, srv.Requests(), tt.requests)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, "ok", resp.Message.Content)
				return
			}
			pe := providerError(t, err)
			assert.Contains(t, pe.Message, tt.wantErr)
			assert.Equal(t, tt.partial, pe.Partial)
			assert.True(t, pe.Retryable)
		})
	}
}

func TestStreamNoRetryAfterDeltasWereShown(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().Reasoning("thinking").Cut(), llmtest.Text("must not be requested"))
	p := newTestProvider(t, srv)
	_, err, log := stream(t, p, userRequest("hi"))
	pe := providerError(t, err)
	assert.True(t, pe.Partial)
	assert.Len(t, srv.Requests(), 1)
	assert.Empty(t, p.slept())
	assert.Equal(t, []agent.Delta{{Kind: agent.DeltaReasoning, Text: "thinking"}}, log.all())
}

func TestStreamIdleTimeout(t *testing.T) {
	t.Run("silent stream fails", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().Content("a").Stall())
		p := newTestProvider(t, srv, func(c *Config) { c.IdleTimeout = 150 * time.Millisecond })
		start := time.Now()
		_, err, _ := stream(t, p, userRequest("hi"))
		pe := providerError(t, err)
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Contains(t, pe.Message, "for 150ms (keep-alives do not count): the stream stalled")
		assert.Contains(t, pe.Message, "FIDO_IDLE_TIMEOUT")
		assert.True(t, pe.Partial)
		assert.Len(t, srv.Requests(), 1)
	})
	t.Run("stall before any byte is retried", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().Stall(), llmtest.Text("ok"))
		p := newTestProvider(t, srv, func(c *Config) { c.IdleTimeout = 100 * time.Millisecond })
		resp, err, _ := stream(t, p, userRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "ok", resp.Message.Content)
		assert.Len(t, srv.Requests(), 2)
	})
	t.Run("keep-alive comments alone time out", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		// Comments 20ms apart without end: bytes keep coming, data never does.
		srv.Enqueue(llmtest.Reply().Content("a").Pace(20 * time.Millisecond).KeepAlive(1 << 30))
		p := newTestProvider(t, srv, func(c *Config) { c.IdleTimeout = 150 * time.Millisecond })
		start := time.Now()
		_, err, _ := stream(t, p, userRequest("hi"))
		pe := providerError(t, err)
		assert.Less(t, time.Since(start), 3*time.Second)
		assert.Contains(t, pe.Message, "no data from the model server")
		assert.Contains(t, pe.Message, "keep-alives do not count")
		assert.Len(t, srv.Requests(), 1)
	})
	t.Run("data lines keep it alive", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		// 8 deltas 40ms apart: 320ms in all, never 150ms without data.
		srv.Enqueue(llmtest.Reply().Pace(40*time.Millisecond).ContentDeltas(8, "x").Finish("stop"))
		p := newTestProvider(t, srv, func(c *Config) { c.IdleTimeout = 150 * time.Millisecond })
		resp, err, _ := stream(t, p, userRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "xxxxxxxx", resp.Message.Content)
		assert.Len(t, srv.Requests(), 1)
	})
}

func TestStreamCancel(t *testing.T) {
	t.Run("during a stalled stream", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().Content("a").Stall())
		p := newTestProvider(t, srv)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := make(chan error, 1)
		go func() {
			_, err := p.Stream(ctx, userRequest("hi"), func(d agent.Delta) {
				if d.Kind == agent.DeltaContent {
					cancel()
				}
			})
			got <- err
		}()
		select {
		case err := <-got:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(3 * time.Second):
			t.Fatal("cancel did not abort the stream")
		}
	})
	t.Run("during the retry wait", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Status(503))
		srv.SetDefault(llmtest.Text("must not be requested"))
		p := New(Config{BaseURL: srv.URL(), APIKey: testKey,
			Backoff: func(int) time.Duration { return time.Hour }})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := make(chan error, 1)
		go func() {
			_, err := p.Stream(ctx, userRequest("hi"), func(d agent.Delta) {
				if d.Kind == agent.DeltaStatus {
					cancel()
				}
			})
			got <- err
		}()
		select {
		case err := <-got:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(3 * time.Second):
			t.Fatal("cancel did not abort the backoff sleep")
		}
		assert.Len(t, srv.Requests(), 1)
	})
	t.Run("already cancelled", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.SetDefault(llmtest.Text("x"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newTestProvider(t, srv).Stream(ctx, userRequest("hi"), nil)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// A cancel from inside onDelta stops the deltas at once, although the
// rest of the answer is already buffered (an in-memory body).
func TestStreamCancelStopsBufferedDeltas(t *testing.T) {
	body := llmtest.Reply().ContentDeltas(5000, "x").Finish("stop").Render(1, "test/model")
	p := New(Config{BaseURL: "http://mem/api/v1", HTTPClient: &http.Client{Transport: llmtest.Memory(body)}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := p.Stream(ctx, userRequest("hi"), func(agent.Delta) {
		n++
		if n == 3 {
			cancel()
		}
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 3, n)
}

func TestStreamConnectionRefusedIsRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	var sleeps []time.Duration
	p := New(Config{BaseURL: "http://" + addr + "/api/v1", APIKey: testKey,
		Sleep: func(ctx context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil }})
	_, err = p.Stream(context.Background(), userRequest("hi"), nil)
	pe := providerError(t, err)
	assert.Contains(t, pe.Message, "cannot reach the model server at "+addr)
	assert.Contains(t, pe.Message, "gave up after 3 retries")
	assert.Len(t, sleeps, 3)
	for _, d := range sleeps {
		assert.Greater(t, d, 500*time.Millisecond, "default backoff")
	}
}

func TestStreamUnknownHostIsNotRetried(t *testing.T) {
	var sleeps int
	// No real lookup: the dialer fails as a resolver answering NXDOMAIN would.
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: "fido-no-such-host.invalid", IsNotFound: true}}
	}}}
	p := New(Config{BaseURL: "http://fido-no-such-host.invalid/api/v1", APIKey: testKey, HTTPClient: client,
		Sleep: func(ctx context.Context, d time.Duration) error { sleeps++; return nil }})
	_, err := p.Stream(context.Background(), userRequest("hi"), nil)
	pe := providerError(t, err)
	assert.Contains(t, pe.Message, "cannot reach the model server at fido-no-such-host.invalid")
	assert.False(t, pe.Retryable)
	assert.Zero(t, sleeps)
}

func TestStreamEndlessLineIsCapped(t *testing.T) {
	orig := maxSSELine
	require.Equal(t, 16<<20, orig, "the documented cap")
	maxSSELine = 2 << 20 // the same logic as 16 MiB, in a fraction of the time
	t.Cleanup(func() { maxSSELine = orig })
	srv := llmtest.NewServer(t)
	// 3 MiB without a newline, then the connection stays open.
	line := "data: " + strings.Repeat("a", 3<<20)
	srv.Enqueue(llmtest.Reply().Content("a").Raw(line).Stall())
	start := time.Now()
	_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
	pe := providerError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, pe.Message, "sent a stream line longer than 2 MiB; the answer was stopped")
	assert.False(t, pe.Retryable)
	assert.Len(t, srv.Requests(), 1)
}

func TestStreamEndlessAnswerIsCapped(t *testing.T) {
	orig := maxStreamBytes
	require.Equal(t, int64(256<<20), orig, "the documented cap")
	maxStreamBytes = 128 << 10 // the same logic as 256 MiB, in a fraction of the time
	t.Cleanup(func() { maxStreamBytes = orig })
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().ContentDeltas(4000, "endless ").Finish("stop")) // ~1 MB
	start := time.Now()
	_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
	pe := providerError(t, err)
	assert.Less(t, time.Since(start), 8*time.Second)
	assert.Contains(t, pe.Message, "sent more than 128 KiB in one answer; the answer was stopped")
	assert.False(t, pe.Retryable)
}

func TestStreamHTMLPageWithStatus200(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>Sign in to the guest Wi-Fi</title></head>\n<body><p>Accept the terms</p></body></html>\n"
	t.Run("declared as text/html", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Status(200).HTML(page))
		_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
		pe := providerError(t, err)
		assert.Contains(t, pe.Message, "answered 200 with a web page instead of a model stream")
		assert.Contains(t, pe.Message, "Sign in to the guest Wi-Fi")
		assert.NotContains(t, pe.Message, "cut")
		assert.Len(t, srv.Requests(), 1, "not retried")
	})
	t.Run("sent as an event stream", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Reply().Raw(page).NoDone())
		_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
		pe := providerError(t, err)
		assert.Contains(t, pe.Message, "answered with a web page instead of a model stream")
		assert.Contains(t, pe.Message, "Sign in to the guest Wi-Fi")
		assert.NotContains(t, pe.Message, "cut")
	})
}

func TestStreamPlainJSONErrorIn200(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply().Raw(`{"error":{"code":"invalid_model","message":"unknown model foo"}}`).NoDone())
	_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
	pe := providerError(t, err)
	assert.Contains(t, pe.Message, "unknown model foo (invalid_model)")
	assert.False(t, pe.Retryable)
	assert.Len(t, srv.Requests(), 1)
}

func TestStreamHeaders(t *testing.T) {
	tests := []struct {
		name           string
		referer, title string
		wantR, wantT   string
	}{
		{"defaults", "", "", "https://github.com/fido-nvim/fido", "Fido"},
		{"custom", "https://example.org/app", "My App", "https://example.org/app", "My App"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Text("x"))
			p := newTestProvider(t, srv, func(c *Config) { c.Referer, c.Title = tt.referer, tt.title })
			_, err, _ := stream(t, p, userRequest("hi"))
			require.NoError(t, err)
			h := srv.Requests()[0].Header
			assert.Equal(t, "Bearer "+testKey, h.Get("Authorization"))
			assert.Equal(t, tt.wantR, h.Get("HTTP-Referer"))
			assert.Equal(t, tt.wantT, h.Get("X-Title"))
			assert.Equal(t, tt.wantT, h.Get("X-OpenRouter-Title"))
			assert.Equal(t, "text/event-stream", h.Get("Accept"))
		})
	}
}

func TestStreamErrorsNeverLeakTheKey(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Status(400).Message("invalid key format: "+testKey),
		llmtest.Reply().Content("x").Error("server_error", "bad token "+testKey),
	)
	p := newTestProvider(t, srv)
	for range 2 {
		_, err, _ := stream(t, p, userRequest("hi"))
		pe := providerError(t, err)
		assert.Contains(t, pe.Message, "[redacted]")
	}
}

func TestStreamRequestBody(t *testing.T) {
	details := json.RawMessage(`[{"type":"reasoning.text","text":"I should <read> it","signature":"s1","format":"anthropic-claude-v1","index":0}]`)
	req := agent.Request{
		Model:     "anthropic/claude-sonnet-4.5",
		Reasoning: "high",
		Tools:     []tools.Spec{{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You are Fido."},
			{Role: agent.RoleUser, Content: "read a.go"},
			{Role: agent.RoleAssistant, Reasoning: "I should <read> it", ReasoningDetails: details,
				ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "call_2", Name: "now", Arguments: ""}}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: ""},
			{Role: agent.RoleTool, ToolCallID: "call_2", Name: "now", Content: "12:00"},
			{Role: agent.RoleAssistant, Content: "Done."},
		},
	}
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("x"))
	_, err, _ := stream(t, newTestProvider(t, srv), req)
	require.NoError(t, err)
	r := srv.Requests()[0]
	require.NoError(t, r.DecodeErr)
	c := r.Chat
	assert.Equal(t, "anthropic/claude-sonnet-4.5", c.Model)
	assert.True(t, c.Stream)
	assert.JSONEq(t, `{"effort":"high"}`, r.Get("reasoning").Raw)
	assert.False(t, r.Get("reasoning_effort").Exists())
	assert.True(t, r.Get("stream_options.include_usage").Bool())
	require.Len(t, c.Messages, 6)
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "tool", "assistant"},
		[]string{c.Messages[0].Role, c.Messages[1].Role, c.Messages[2].Role, c.Messages[3].Role, c.Messages[4].Role, c.Messages[5].Role})
	a := c.Messages[2]
	assert.Equal(t, "I should <read> it", a.Reasoning)
	assert.Equal(t, string(details), a.ReasoningDetails, "reasoning_details passed back unmodified")
	assert.Equal(t, []llmtest.ToolCall{
		{ID: "call_1", Type: "function", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_2", Type: "function", Name: "now", Arguments: `{}`},
	}, a.ToolCalls)
	assert.True(t, c.Messages[3].HasContent, "an empty tool result still carries content")
	assert.Equal(t, "", c.Messages[3].Content)
	assert.Equal(t, "call_1", c.Messages[3].ToolCallID)
	assert.Equal(t, "12:00", c.Messages[4].Content)
	assert.Equal(t, "Done.", c.Messages[5].Content)
	assert.False(t, r.Get("messages.5.reasoning").Exists())
	assert.False(t, r.Get("messages.0.reasoning_details").Exists())
	require.Len(t, c.Tools, 1)
	assert.Equal(t, llmtest.Tool{Type: "function", Name: "read_file", Description: "Read a file.",
		Parameters: `{"type":"object","properties":{"path":{"type":"string"}}}`,
		Raw:        `{"function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},"type":"function"}`}, c.Tools[0])

	t.Run("no reasoning key without effort", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Text("x"))
		_, err, _ := stream(t, newTestProvider(t, srv), userRequest("hi"))
		require.NoError(t, err)
		assert.False(t, srv.Requests()[0].Get("reasoning").Exists())
		assert.False(t, srv.Requests()[0].Get("tools").Exists())
		assert.False(t, srv.Requests()[0].Get("provider").Exists())
		assert.False(t, srv.Requests()[0].Get("messages.0.content").IsArray(), "no cache_control for other models")
	})
	t.Run("provider preferences", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Text("x"))
		no := false
		p := newTestProvider(t, srv, func(c *Config) {
			c.Preferences = &ProviderPreferences{Order: []string{"anthropic", "google-vertex"}, AllowFallbacks: &no, RequireParameters: true}
		})
		_, err, _ := stream(t, p, userRequest("hi"))
		require.NoError(t, err)
		assert.JSONEq(t, `{"order":["anthropic","google-vertex"],"allow_fallbacks":false,"require_parameters":true}`,
			srv.Requests()[0].Get("provider").Raw)
	})
}

// A tool schema that is not JSON fails the call before any request, with
// the reason, and is not retried.
func TestStreamInvalidToolSchema(t *testing.T) {
	srv := llmtest.NewServer(t)
	req := userRequest("hi")
	req.Tools = []tools.Spec{{Name: "bad", Description: "x", Parameters: json.RawMessage(`{"type":`)}}
	_, err, _ := stream(t, newTestProvider(t, srv), req)
	pe := providerError(t, err)
	assert.Contains(t, pe.Message, "cannot build the request")
	assert.False(t, pe.Retryable)
	assert.Empty(t, srv.Requests())
}

func TestStreamRequestBytesStable(t *testing.T) {
	mkSpecs := func() []tools.Spec {
		return []tools.Spec{
			{Name: "list_files", Description: "List <files> & dirs.", Parameters: json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string"}},"required":["dir"]}`)},
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}}}`)},
			{Name: "now", Description: "Time."},
		}
	}
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Text("x"))
	p := newTestProvider(t, srv)
	msgs := []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, {Role: agent.RoleUser, Content: "q"}}
	for range 5 {
		req := agent.Request{Model: "m", Messages: agent.CloneMessages(msgs), Tools: mkSpecs(), Reasoning: "low"}
		_, err, _ := stream(t, p, req)
		require.NoError(t, err)
	}
	// A different provider instance produces the same bytes too.
	_, err, _ := stream(t, newTestProvider(t, srv), agent.Request{Model: "m", Messages: agent.CloneMessages(msgs), Tools: mkSpecs(), Reasoning: "low"})
	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 6)
	for _, r := range reqs[1:] {
		assert.Equal(t, string(reqs[0].Body), string(r.Body))
		assert.Equal(t, reqs[0].Chat.ToolsRaw, r.Chat.ToolsRaw)
	}
	assert.Equal(t, []string{"list_files", "read_file", "now"},
		[]string{reqs[0].Chat.Tools[0].Name, reqs[0].Chat.Tools[1].Name, reqs[0].Chat.Tools[2].Name}, "spec order kept")
	assert.Equal(t, `{"type":"object","properties":{}}`, reqs[0].Chat.Tools[2].Parameters)
}

func TestStreamConcurrentCalls(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetDefault(llmtest.Reply().Reasoning("r").Content("same").Finish("stop").Usage(3, 4, 0, 0.25))
	p := newTestProvider(t, srv)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			resp, err := p.Stream(context.Background(), userRequest("hi"), nil)
			if err == nil && resp.Message.Content != "same" {
				err = errors.New("wrong content " + resp.Message.Content)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"absent", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"milliseconds", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseRetryAfter(tt.h, now))
		})
	}
}

func TestErrorDetail(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name string
		body string
		want string
	}{
		{"json message", `{"error":{"code":429,"message":"Rate limit exceeded"}}`, "Rate limit exceeded"},
		{"top-level message", `{"message":"nope"}`, "nope"},
		{"provider raw", `{"error":{"message":"Provider returned error","metadata":{"raw":"upstream overloaded","provider_name":"Fireworks"}}}`,
			"Provider returned error — upstream overloaded [Fireworks]"},
		{"html title", "<html><head><title>502 Bad\n Gateway</title></head><body>x</body></html>", "502 Bad Gateway"},
		{"html without title", "<!doctype html><html><body><script>var a=1;</script><h1>Service  down</h1></body></html>", "Service down"},
		{"plain text", "upstream connect error\nor disconnect", "upstream connect error or disconnect"},
		{"long text clipped", long, strings.TrimSpace(long[:159]) + "…"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, errorDetail([]byte(tt.body)))
		})
	}
}

func TestDefaultBackoff(t *testing.T) {
	for attempt, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 10: 20 * time.Second} {
		for range 20 {
			d := defaultBackoff(attempt)
			assert.GreaterOrEqual(t, d, base*8/10)
			assert.LessOrEqual(t, d, base*12/10)
		}
	}
}

func TestServiceLabel(t *testing.T) {
	assert.Equal(t, "OpenRouter", serviceLabel(agent.DefaultBaseURL))
	assert.Equal(t, "the model server at localhost:8080", serviceLabel("http://localhost:8080/v1"))
}

// BenchmarkStream20kDeltas streams 20,000 small content deltas from the fake
// server as fast as it sends them, through the whole provider.
func BenchmarkStream20kDeltas(b *testing.B) {
	srv := llmtest.NewServer(b)
	srv.SetDefault(llmtest.Reply().ContentDeltas(20000, "tok ").Finish("stop").Usage(10, 20000, 0, 0.01))
	p := New(Config{BaseURL: srv.URL(), APIKey: testKey})
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		resp, err := p.Stream(context.Background(), userRequest("hi"), func(d agent.Delta) { n += len(d.Text) })
		if err != nil || n != 80000 || len(resp.Message.Content) != 80000 {
			b.Fatalf("err=%v text=%d len=%d", err, n, len(resp.Message.Content))
		}
	}
}

// feedBody is a response body whose reads return what the test feeds it,
// one feed per read, and wait for the next.
type feedBody struct{ feed chan string }

func (b feedBody) Read(p []byte) (int, error) {
	s, ok := <-b.feed
	if !ok {
		return 0, io.EOF
	}
	return copy(p, s), nil
}

func (feedBody) Close() error { return nil }

type feedTransport struct{ body feedBody }

func (t feedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	return &http.Response{StatusCode: 200, Header: h, Body: t.body, ContentLength: -1, Request: r}, nil
}

// Coalescing never holds text back: a piece that arrives alone reaches
// onDelta before the provider reads on, so it is on screen while the
// model is still writing the next one.
func TestStreamHandsOnEachPieceBeforeTheNextRead(t *testing.T) {
	body := feedBody{feed: make(chan string)}
	p := New(Config{BaseURL: "http://mem/api/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: feedTransport{body}}})
	got := make(chan agent.Delta, 16)
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(context.Background(), userRequest("hi"), func(d agent.Delta) { got <- d })
		done <- err
	}()
	chunk := func(delta string) string {
		return `data: {"id":"gen-1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	for _, step := range []struct{ delta, kind, text string }{
		{`{"reasoning":"hm"}`, "reasoning", "hm"},
		{`{"content":"Hel"}`, "content", "Hel"},
		{`{"content":"lo\n"}`, "content", "lo\n"},
	} {
		body.feed <- chunk(step.delta)
		select {
		case d := <-got:
			assert.Equal(t, step.text, d.Text)
			assert.Equal(t, step.kind == "reasoning", d.Kind == agent.DeltaReasoning)
		case <-time.After(5 * time.Second):
			t.Fatalf("%q was held back until the next read", step.text)
		}
	}
	body.feed <- `data: {"id":"gen-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	close(body.feed)
	require.NoError(t, <-done)
}

// A read that brings many chunks hands their text on as one delta per
// read, not one per chunk, and nothing is lost or reordered.
func TestStreamCoalescesWhatOneReadBrings(t *testing.T) {
	r := llmtest.Reply()
	var want strings.Builder
	for i := range 3000 {
		piece := fmt.Sprintf("w%d ", i)
		if i%500 == 499 {
			r.Reasoning(piece)
			continue
		}
		r.Content(piece)
		want.WriteString(piece)
	}
	body := r.Finish("stop").Render(1, "test/model")
	p := New(Config{BaseURL: "http://mem/api/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: llmtest.Memory(body)}})
	log := &deltaLog{}
	resp, err := p.Stream(context.Background(), userRequest("hi"), log.add)
	require.NoError(t, err)
	assert.Equal(t, want.String(), resp.Message.Content)
	var shown strings.Builder
	for _, d := range log.kinds(agent.DeltaContent) {
		shown.WriteString(d.Text)
	}
	assert.Equal(t, want.String(), shown.String())
	// A 32 KiB read holds about 150 chunks; the six reasoning pieces split
	// the answer's runs.
	reads := len(body)/sseBufferSize + 1
	assert.LessOrEqual(t, len(log.all()), reads+2*6, "deltas")
	assert.Len(t, log.kinds(agent.DeltaReasoning), 6)
}
