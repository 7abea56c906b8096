package llmtest

import (
	"bufio"
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

const chatBody = `{"model":"test/model","stream":true,"messages":[{"role":"user","content":"hi"}]}`

func post(t *testing.T, ctx context.Context, srv *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events splits an SSE body into its events (without the blank separators).
func events(t *testing.T, body string) []string {
	t.Helper()
	require.True(t, strings.HasSuffix(body, "\n\n"), "every event ends with a blank line: %q", body)
	return strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestReplyFraming(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Reply().Role().Reasoning("hmm").Content("Hel").Content("lo").Finish("stop").Usage(10, 5, 3, 0.0012))
	resp := post(t, context.Background(), srv, chatBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "gen-llmtest-1", resp.Header.Get("X-Generation-Id"))

	ev := events(t, readAll(t, resp))
	require.Len(t, ev, 7)
	for _, e := range ev {
		require.True(t, strings.HasPrefix(e, "data: "), e)
	}
	assert.Equal(t, "data: [DONE]", ev[6])
	payload := func(i int) gjson.Result { return gjson.Parse(strings.TrimPrefix(ev[i], "data: ")) }
	assert.True(t, strings.HasPrefix(ev[0], `data: {"id":"gen-llmtest-1"`), "first key is id")
	assert.Equal(t, "test/model", payload(0).Get("model").String())
	assert.Equal(t, "assistant", payload(0).Get("choices.0.delta.role").String())
	assert.Equal(t, "hmm", payload(1).Get("choices.0.delta.reasoning").String())
	assert.Equal(t, "Hel", payload(2).Get("choices.0.delta.content").String())
	assert.Equal(t, "lo", payload(3).Get("choices.0.delta.content").String())
	assert.Equal(t, "stop", payload(4).Get("choices.0.finish_reason").String())
	assert.Equal(t, gjson.Null, payload(3).Get("choices.0.finish_reason").Type)
	u := payload(5)
	assert.Equal(t, "[]", u.Get("choices").Raw)
	assert.Equal(t, int64(10), u.Get("usage.prompt_tokens").Int())
	assert.Equal(t, int64(5), u.Get("usage.completion_tokens").Int())
	assert.Equal(t, int64(3), u.Get("usage.prompt_tokens_details.cached_tokens").Int())
	assert.Equal(t, 0.0012, u.Get("usage.cost").Float())
}

func TestToolCallFragments(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		fragments int
		want      int
	}{
		{"three", `{"path":"a.go"}`, 3, 3},
		{"one", `{"path":"a.go"}`, 1, 1},
		{"more fragments than runes", `{}`, 5, 2},
		{"empty arguments", ``, 3, 1},
		{"multibyte", `{"q":"żółć"}`, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(t)
			srv.Enqueue(Reply().ToolCall("call_9", "read_file", tt.args, tt.fragments).Finish("tool_calls"))
			ev := events(t, readAll(t, post(t, context.Background(), srv, chatBody)))
			require.Len(t, ev, tt.want+2)
			var args strings.Builder
			for i, e := range ev[:tt.want] {
				tc := gjson.Parse(strings.TrimPrefix(e, "data: ")).Get("choices.0.delta.tool_calls.0")
				assert.Equal(t, int64(0), tc.Get("index").Int())
				if i == 0 {
					assert.Equal(t, "call_9", tc.Get("id").String())
					assert.Equal(t, "read_file", tc.Get("function.name").String())
				} else {
					assert.False(t, tc.Get("id").Exists())
					assert.False(t, tc.Get("function.name").Exists())
				}
				args.WriteString(tc.Get("function.arguments").String())
			}
			assert.Equal(t, tt.args, args.String())
		})
	}
}

func TestSecondToolCallGetsNextIndex(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Reply().ToolCall("a", "x", `{}`, 1).ToolCall("b", "y", `{}`, 1))
	ev := events(t, readAll(t, post(t, context.Background(), srv, chatBody)))
	require.Len(t, ev, 3)
	assert.Equal(t, int64(1), gjson.Parse(strings.TrimPrefix(ev[1], "data: ")).Get("choices.0.delta.tool_calls.0.index").Int())
}

func TestCommentsErrorAndNoDone(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(
		Reply().Comment("hello").KeepAlive(3).Content("x").NoDone(),
		Reply().Content("partial").Error("server_error", "upstream died").Content("never sent"),
	)
	ev := events(t, readAll(t, post(t, context.Background(), srv, chatBody)))
	require.Len(t, ev, 5)
	assert.Equal(t, []string{": hello", ": OPENROUTER PROCESSING", ": OPENROUTER PROCESSING", ": OPENROUTER PROCESSING"}, ev[:4])
	assert.Contains(t, ev[4], `"content":"x"`)

	ev = events(t, readAll(t, post(t, context.Background(), srv, chatBody)))
	require.Len(t, ev, 2, "the error chunk ends the stream, without [DONE]")
	assert.True(t, strings.HasPrefix(ev[1], `data: {"id":`), "OpenRouter's error chunk starts with id")
	p := gjson.Parse(strings.TrimPrefix(ev[1], "data: "))
	assert.Equal(t, "server_error", p.Get("error.code").String())
	assert.Equal(t, "upstream died", p.Get("error.message").String())
	assert.Equal(t, "error", p.Get("choices.0.finish_reason").String())
}

func TestStatusResponses(t *testing.T) {
	tests := []struct {
		name        string
		resp        *StatusBuilder
		code        int
		contentType string
		body        string
		header      [2]string
	}{
		{"default body", Status(401), 401, "application/json", `{"error":{"code":401,"message":"Unauthorized"}}`, [2]string{}},
		{"message", Status(402).Message("Insufficient credits"), 402, "application/json",
			`{"error":{"code":402,"message":"Insufficient credits"}}`, [2]string{}},
		{"retry after", Status(429).Header("Retry-After", "1").Body(`{"error":{"code":429,"message":"slow down"}}`), 429,
			"application/json", `{"error":{"code":429,"message":"slow down"}}`, [2]string{"Retry-After", "1"}},
		{"html", Status(503).HTML("<html><title>503 Service Unavailable</title></html>"), 503,
			"text/html; charset=utf-8", "<html><title>503 Service Unavailable</title></html>", [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(t)
			srv.Enqueue(tt.resp)
			resp := post(t, context.Background(), srv, chatBody)
			assert.Equal(t, tt.code, resp.StatusCode)
			assert.Equal(t, tt.contentType, resp.Header.Get("Content-Type"))
			assert.Equal(t, tt.body, readAll(t, resp))
			if tt.header[0] != "" {
				assert.Equal(t, tt.header[1], resp.Header.Get(tt.header[0]))
			}
		})
	}
}

func TestCutConnection(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Reply().Content("partial").Cut())
	resp := post(t, context.Background(), srv, chatBody)
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, "partial")
	_, err = io.ReadAll(br)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestStallUntilClientGoesAway(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Reply().Content("first").Stall())
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, srv, chatBody)
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, "first")
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(br)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a stalled stream ended by itself: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-got:
		assert.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the client did not end the read")
	}
}

func TestCloseReleasesStalledHandler(t *testing.T) {
	srv := NewServer(nil)
	srv.Enqueue(Reply().Stall())
	resp := post(t, context.Background(), srv, chatBody)
	done := make(chan struct{})
	go func() {
		srv.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a stalled handler")
	}
	_, err := io.ReadAll(resp.Body)
	assert.Error(t, err)
	srv.Close() // idempotent
}

func TestPace(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Reply().Pace(15*time.Millisecond).ContentDeltas(4, "ab"))
	start := time.Now()
	ev := events(t, readAll(t, post(t, context.Background(), srv, chatBody)))
	assert.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond)
	require.Len(t, ev, 5)
	for _, e := range ev[:4] {
		assert.Contains(t, e, `"content":"ab"`)
	}
}

func TestScriptOrderDefaultAndExhaustion(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Text("one"), Status(500))
	assert.Equal(t, 2, srv.Pending())
	assert.Contains(t, readAll(t, post(t, context.Background(), srv, chatBody)), `"content":"one"`)
	assert.Equal(t, 500, post(t, context.Background(), srv, chatBody).StatusCode)

	resp := post(t, context.Background(), srv, chatBody)
	assert.Equal(t, 500, resp.StatusCode)
	assert.Contains(t, readAll(t, resp), "no scripted response for request 3")

	srv.SetDefault(Text("again"))
	for range 2 {
		assert.Contains(t, readAll(t, post(t, context.Background(), srv, chatBody)), `"content":"again"`)
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 5)
	for i, r := range reqs {
		assert.Equal(t, i+1, r.Seq)
		assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
		assert.Equal(t, chatBody, string(r.Body))
		assert.Equal(t, "/api/v1/chat/completions", r.Path)
	}
}

func TestOtherPathsAreNotFound(t *testing.T) {
	srv := NewServer(t)
	resp, err := http.Get(srv.URL() + "/models")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Empty(t, srv.Requests())
}

func TestWaitRequests(t *testing.T) {
	srv := NewServer(t)
	srv.SetDefault(Text("ok"))
	_, err := srv.WaitRequests(1, 20*time.Millisecond)
	require.Error(t, err)

	go func() {
		for range 2 {
			req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(chatBody))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	reqs, err := srv.WaitRequests(2, 5*time.Second)
	require.NoError(t, err)
	assert.Len(t, reqs, 2)
}

func TestDecodeChatRequest(t *testing.T) {
	body := `{"model":"m","stream":true,"reasoning":{"effort":"high"},"messages":[` +
		`{"role":"system","content":"sys"},` +
		`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]},` +
		`{"role":"assistant","reasoning":"r","reasoning_details":[{"type":"reasoning.text","text":"r"}],"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":""},` +
		`{"role":"tool","tool_call_id":"c2"}],` +
		`"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]}`
	c, err := DecodeChatRequest([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, "m", c.Model)
	assert.True(t, c.Stream)
	assert.Equal(t, "high", c.ReasoningEffort)
	require.Len(t, c.Messages, 5)
	assert.Equal(t, "sys", c.Messages[0].Content)
	assert.Equal(t, "ab", c.Messages[1].Content)
	assert.Equal(t, "r", c.Messages[2].Reasoning)
	assert.Equal(t, `[{"type":"reasoning.text","text":"r"}]`, c.Messages[2].ReasoningDetails)
	assert.False(t, c.Messages[2].HasContent)
	assert.Equal(t, []ToolCall{{ID: "c1", Type: "function", Name: "f", Arguments: "{}"}}, c.Messages[2].ToolCalls)
	assert.True(t, c.Messages[3].HasContent)
	assert.Equal(t, "c1", c.Messages[3].ToolCallID)
	assert.False(t, c.Messages[4].HasContent)
	require.Len(t, c.Tools, 1)
	assert.Equal(t, Tool{Type: "function", Name: "f", Description: "d", Parameters: `{"type":"object"}`,
		Raw: `{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}`}, c.Tools[0])
	assert.Equal(t, `[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]`, c.ToolsRaw)

	_, err = DecodeChatRequest([]byte(`{"model":`))
	assert.Error(t, err)
}

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"abcde", 2, []string{"ab", "cde"}},
		{"ab", 5, []string{"a", "b"}},
		{"", 3, []string{""}},
		{"żółć", 2, []string{"żó", "łć"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, split(tt.s, tt.n), "%q/%d", tt.s, tt.n)
	}
}

func TestRenderMatchesTheServedStream(t *testing.T) {
	reply := Reply().Role().Reasoning("hmm").Content("Hel").KeepAlive(2).ToolCall("c1", "ls", `{"a":1}`, 2).Finish("stop").Usage(1, 2, 0, 0.5)
	srv := NewServer(t)
	srv.Enqueue(reply)
	served := readAll(t, post(t, context.Background(), srv, chatBody))
	assert.Equal(t, served, string(reply.Render(1, "test/model")))
	assert.Panics(t, func() { Reply().Content("x").Cut().Render(1, "m") })
}

func TestHoldUntilReleased(t *testing.T) {
	srv := NewServer(t)
	release := make(chan struct{})
	srv.Enqueue(Reply().Content("before").Hold(release).Content("after").Finish("stop"))
	resp := post(t, context.Background(), srv, chatBody)
	r := bufio.NewReader(resp.Body)
	first, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, first, "before")
	_, _ = r.ReadString('\n') // the blank line ending the event
	got := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		t.Fatalf("sent before the release: %q", line)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case line := <-got:
		assert.Contains(t, line, "after")
	case <-time.After(5 * time.Second):
		t.Fatal("nothing after the release")
	}
}
