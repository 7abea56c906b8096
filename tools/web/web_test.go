package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

const testTavilyKey = "tvly-test-0123456789abcdef"

// tavilyRequest is one request the fake Tavily server received.
type tavilyRequest struct {
	Method, Path, Auth, ContentType string
	Raw                             string
	Body                            map[string]any
}

// fakeTavily is an httptest stand-in for the Tavily API; reply decides the answer.
type fakeTavily struct {
	srv   *httptest.Server
	mu    sync.Mutex
	reqs  []tavilyRequest
	reply func(w http.ResponseWriter, r *http.Request)
}

func newFakeTavily(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *fakeTavily {
	t.Helper()
	f := &fakeTavily{reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rec := tavilyRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
			ContentType: r.Header.Get("Content-Type"), Raw: string(raw)}
		_ = json.Unmarshal(raw, &rec.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, rec)
		f.mu.Unlock()
		f.reply(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTavily) requests() []tavilyRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tavilyRequest(nil), f.reqs...)
}

// jsonReply answers every request with status and body.
func jsonReply(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// webTestTools builds both web tools against baseURL.
func webTestTools(t *testing.T, cfg Config) (websearch, browseURL tools.Tool) {
	t.Helper()
	ts := Tools(cfg)
	require.Len(t, ts, 2)
	require.Equal(t, "websearch", ts[0].Name())
	require.Equal(t, "browse_url", ts[1].Name())
	return ts[0], ts[1]
}

// callTool runs a tool with args (a string is sent as raw JSON).
func callTool(t *testing.T, ctx context.Context, tool tools.Tool, args any) (tools.Result, error) {
	t.Helper()
	var raw []byte
	if s, ok := args.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		raw, err = json.Marshal(args)
		require.NoError(t, err)
	}
	return tool.Run(ctx, tools.Invocation{}, raw)
}

// resultError is the message of an ErrorResult's {"error": "..."} content.
func resultError(t *testing.T, res tools.Result) string {
	t.Helper()
	var body struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &body), res.Content)
	return body.Error
}

func TestWebToolsCatalog(t *testing.T) {
	c := newTavilyClient(Config{})
	assert.Equal(t, DefaultTavilyURL, c.baseURL)
	assert.Equal(t, tavilyDefaultTimeout, c.timeout)
	assert.Equal(t, "http://127.0.0.1:9", newTavilyClient(Config{BaseURL: " http://127.0.0.1:9/ "}).baseURL)

	reg, err := tools.NewRegistry(Tools(Config{})...)
	require.NoError(t, err)
	assert.Equal(t, []string{"browse_url", "websearch"}, reg.Names())
	for _, tool := range reg.Tools() {
		assert.Equal(t, tools.ReadOnly, tool.Access(), tool.Name())
		assert.Contains(t, tool.Description(), "untrusted", tool.Name())
		assert.Contains(t, tool.Description(), "credits", tool.Name())
		var schema map[string]any
		require.NoError(t, json.Unmarshal(tool.Parameters(), &schema), tool.Name())
		assert.Equal(t, false, schema["additionalProperties"], tool.Name())
		// A subagent may call it: the guard lets ReadOnly tools through.
		res := reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent}, DelegationDepth: 1}, tool.Name(), json.RawMessage(`{}`))
		assert.NotContains(t, res.Content, "permission_denied", tool.Name())
		assert.Contains(t, res.Content, "needs TAVILY_API_KEY", tool.Name())
	}
}

func TestWebMissingKeySendsNothing(t *testing.T) {
	fake := newFakeTavily(t, jsonReply(200, `{"results":[]}`))
	ws, bu := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: "  "})
	tests := []struct {
		tool tools.Tool
		args any
		want string
	}{
		{ws, map[string]any{"query": "golang"}, "websearch: needs TAVILY_API_KEY; set it and restart Fido"},
		{bu, map[string]any{"urls": "https://go.dev"}, "browse_url: needs TAVILY_API_KEY; set it and restart Fido"},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Name(), func(t *testing.T) {
			res, err := callTool(t, context.Background(), tt.tool, tt.args)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Content, tt.want)
		})
	}
	assert.Empty(t, fake.requests())
}

func TestWebsearchRequestAndResult(t *testing.T) {
	tests := []struct {
		name     string
		args     any
		reply    string
		wantBody map[string]any
		want     websearchResult
		summary  string
	}{
		{
			name:  "defaults, answer, string response_time",
			args:  map[string]any{"query": "  go generics tutorial "},
			reply: `{"query":"go generics tutorial","answer":"Go has generics since 1.18.","images":[],"results":[{"title":"Tutorial ","url":"https://go.dev/doc/tutorial/generics","content":"Learn generics.","score":0.91,"raw_content":null},{"title":"Blog","url":"https://go.dev/blog/intro-generics","content":"An intro.","score":"0.5"}],"response_time":"1.67","request_id":"r1"}`,
			wantBody: map[string]any{"query": "go generics tutorial", "search_depth": "basic", "include_answer": "basic",
				"max_results": float64(5)},
			want: websearchResult{Answer: "Go has generics since 1.18.", Results: []websearchHit{
				{Title: "Tutorial", URL: "https://go.dev/doc/tutorial/generics", Content: "Learn generics.", Score: 0.91},
				{Title: "Blog", URL: "https://go.dev/blog/intro-generics", Content: "An intro.", Score: 0.5},
			}},
			summary: "2 results + answer",
		},
		{
			name: "all options, numeric response_time, no answer",
			args: map[string]any{"query": "release", "max_results": 1, "topic": "News", "time_range": "w",
				"include_domains": []string{"https://go.dev/", " pkg.go.dev", ""}, "exclude_domains": []string{"example.com"}},
			reply: `{"results":[{"title":"Go 1.30","url":"https://go.dev/doc/go1.30","content":"Released.","score":0.7}],"response_time":0.42}`,
			wantBody: map[string]any{"query": "release", "search_depth": "basic", "include_answer": "basic",
				"max_results": float64(1), "topic": "news", "time_range": "week",
				"include_domains": []any{"go.dev", "pkg.go.dev"}, "exclude_domains": []any{"example.com"}},
			want: websearchResult{Results: []websearchHit{
				{Title: "Go 1.30", URL: "https://go.dev/doc/go1.30", Content: "Released.", Score: 0.7},
			}},
			summary: "1 result",
		},
		{
			name:     "nothing found",
			args:     map[string]any{"query": "zzqx"},
			reply:    `{"answer":null,"results":[],"response_time":null}`,
			wantBody: map[string]any{"query": "zzqx", "search_depth": "basic", "include_answer": "basic", "max_results": float64(5)},
			want:     websearchResult{Results: []websearchHit{}},
			summary:  "no results",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeTavily(t, jsonReply(200, tt.reply))
			ws, _ := webTestTools(t, Config{BaseURL: fake.srv.URL + "/", APIKey: testTavilyKey})
			res, err := callTool(t, context.Background(), ws, tt.args)
			require.NoError(t, err)
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, tt.summary, res.Summary)

			reqs := fake.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, http.MethodPost, reqs[0].Method)
			assert.Equal(t, "/search", reqs[0].Path)
			assert.Equal(t, "Bearer "+testTavilyKey, reqs[0].Auth)
			assert.Equal(t, "application/json", reqs[0].ContentType)
			assert.NotContains(t, reqs[0].Raw, testTavilyKey)
			assert.Equal(t, tt.wantBody, reqs[0].Body)

			var got websearchResult
			require.NoError(t, json.Unmarshal([]byte(res.Content), &got))
			assert.Equal(t, webUntrustedNote, got.Note)
			got.Note = ""
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWebsearchBadArguments(t *testing.T) {
	fake := newFakeTavily(t, jsonReply(200, `{"results":[]}`))
	ws, _ := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey})
	tests := []struct {
		name string
		args any
		want string
	}{
		{"not JSON", `{"query":`, "not a valid JSON object"},
		{"missing query", map[string]any{}, "query is required"},
		{"blank query", map[string]any{"query": "  \n"}, "query is required"},
		{"long query", map[string]any{"query": strings.Repeat("é", 401)}, "query is 401 characters; at most 400"},
		{"query type", map[string]any{"query": 7}, `argument "query" must be a string`},
		{"unknown argument", map[string]any{"query": "x", "depth": "advanced"}, `unknown argument "depth"`},
		{"zero results", map[string]any{"query": "x", "max_results": 0}, "max_results must be between 1 and 20, got 0"},
		{"too many results", map[string]any{"query": "x", "max_results": 21}, "max_results must be between 1 and 20, got 21"},
		{"topic", map[string]any{"query": "x", "topic": "sports"}, `topic must be one of general, news, finance, got "sports"`},
		{"time_range", map[string]any{"query": "x", "time_range": "decade"}, `time_range must be one of day, week, month, year, got "decade"`},
		{"domain with space", map[string]any{"query": "x", "include_domains": []string{"go dev"}}, `include_domains entry "go dev" is not a domain`},
		{"too many excludes", map[string]any{"query": "x", "exclude_domains": make([]string, 151)}, "exclude_domains has 151 entries; at most 150"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callTool(t, context.Background(), ws, tt.args)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, resultError(t, res), tt.want)
			assert.True(t, strings.HasPrefix(res.Summary, "websearch: "), res.Summary)
		})
	}
	assert.Empty(t, fake.requests(), "invalid arguments never reach Tavily")
}

func TestWebsearchContentBounds(t *testing.T) {
	longAnswer := strings.Repeat("a", websearchMaxAnswer+10)
	longSnippet := strings.Repeat("ü", websearchMaxContent+500)
	reply, err := json.Marshal(map[string]any{"answer": longAnswer, "results": []any{
		map[string]any{"title": "t", "url": "https://x.test", "content": longSnippet, "score": 1},
	}})
	require.NoError(t, err)
	fake := newFakeTavily(t, jsonReply(200, string(reply)))
	ws, _ := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey})
	res, err := callTool(t, context.Background(), ws, map[string]any{"query": "x"})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	var got websearchResult
	require.NoError(t, json.Unmarshal([]byte(res.Content), &got))
	require.Len(t, got.Results, 1)
	tests := []struct {
		name, text, prefix, marker string
	}{
		{"answer", got.Answer, strings.Repeat("a", websearchMaxAnswer), fmt.Sprintf("[answer cut at %d of %d characters]", websearchMaxAnswer, websearchMaxAnswer+10)},
		{"snippet", got.Results[0].Content, strings.Repeat("ü", websearchMaxContent), fmt.Sprintf("[snippet cut at %d of %d characters]", websearchMaxContent, websearchMaxContent+500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, strings.HasPrefix(tt.text, tt.prefix+"\n"))
			assert.True(t, strings.HasSuffix(tt.text, tt.marker), tt.text[len(tt.prefix):])
			assert.True(t, utf8.ValidString(tt.text))
		})
	}
}

func TestWebErrorStatuses(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		retryAfter string
		want       string
	}{
		{"400 with detail", 400, `{"detail":{"error":"Invalid topic. Must be 'general' or 'news'."}}`, "",
			"Tavily rejected the request as invalid (400): Invalid topic. Must be 'general' or 'news'."},
		{"400 echoes the key", 400, `{"detail":{"error":"bad key ` + testTavilyKey + ` in request"}}`, "",
			"Tavily rejected the request as invalid (400): bad key [redacted] in request"},
		{"400 FastAPI list", 400, `{"detail":[{"loc":["body","query"],"msg":"field required"}]}`, "",
			"Tavily rejected the request as invalid (400): field required"},
		{"401", 401, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`, "",
			"Tavily rejected the API key (401): check TAVILY_API_KEY"},
		{"403", 403, `{"detail":"Forbidden"}`, "", "Tavily refused the request (403): Forbidden"},
		{"429", 429, `{"detail":{"error":"Your request has been blocked due to excessive requests."}}`, "",
			"Tavily rate-limited the request (429): wait before searching again"},
		{"429 Retry-After", 429, `{}`, "12", "Tavily rate-limited the request (429): retry after 12 s"},
		{"432", 432, `{"detail":{"error":"This request exceeds your plan's set usage limit."}}`, "",
			"Tavily usage limit of this key or plan is reached (432)"},
		{"433", 433, `{"detail":{"error":"This request exceeds the pay-as-you-go limit."}}`, "",
			"Tavily pay-as-you-go spending limit is reached (433)"},
		{"500", 500, `{"detail":{"error":"Internal Server Error"}}`, "", "Tavily had a server error (500): try again later"},
		{"502 HTML", 502, `<html><body>Bad Gateway</body></html>`, "", "Tavily had a server error (502): try again later"},
		{"other status plain text", 418, "I'm a teapot", "", "Tavily answered with HTTP 418: I'm a teapot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeTavily(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			ws, bu := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey})
			calls := []struct {
				tool tools.Tool
				args any
			}{
				{ws, map[string]any{"query": "x"}},
				{bu, map[string]any{"urls": []string{"https://go.dev"}}},
			}
			for _, c := range calls {
				res, err := callTool(t, context.Background(), c.tool, c.args)
				require.NoError(t, err)
				assert.True(t, res.IsError)
				msg := resultError(t, res)
				assert.True(t, strings.HasPrefix(msg, c.tool.Name()+": "+tt.want), msg)
				assert.NotContains(t, res.Content, testTavilyKey)
				assert.NotContains(t, res.Summary, testTavilyKey)
			}
			assert.Len(t, fake.requests(), 2)
		})
	}
}

func TestWebTransportFailures(t *testing.T) {
	big := `{"results":[{"url":"https://x.test","raw_content":"` + strings.Repeat("x", 4096) + `"}]}`
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, r *http.Request)
		want  string
	}{
		{"response over the cap", jsonReply(200, big), "the Tavily response is larger than 1 KiB and was not read"},
		{"not JSON", jsonReply(200, `<html>maintenance</html>`), "Tavily returned a response that is not the expected JSON"},
		{"wrong JSON shape", jsonReply(200, `{"results":"none"}`), "Tavily returned a response that is not the expected JSON"},
		{"connection dropped", func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, "cannot reach Tavily"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeTavily(t, tt.reply)
			c := newTavilyClient(Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey})
			c.maxBytes = 1024
			bu := newBrowseURL(c)
			res, err := callTool(t, context.Background(), bu, map[string]any{"urls": "https://x.test"})
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Content, tt.want)
			assert.NotContains(t, res.Content, testTavilyKey)
		})
	}
}

func TestWebUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	ws, _ := webTestTools(t, Config{BaseURL: url, APIKey: testTavilyKey})
	res, err := callTool(t, context.Background(), ws, map[string]any{"query": "x"})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "websearch: cannot reach Tavily")
	assert.NotContains(t, res.Content, testTavilyKey)
}

func TestWebSlowServer(t *testing.T) {
	release := make(chan struct{})
	fake := newFakeTavily(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration // cancel the caller's ctx after this; 0 = never
		wantErr error
		want    string
	}{
		{"caller cancels", time.Minute, 50 * time.Millisecond, context.Canceled, ""},
		{"request timeout", 100 * time.Millisecond, 0, nil, "websearch: Tavily did not answer within 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, _ := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey, Timeout: tt.timeout})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			start := time.Now()
			res, err := callTool(t, ctx, ws, map[string]any{"query": "slow"})
			assert.Less(t, time.Since(start), 3*time.Second)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tt.wantErr), err)
				return
			}
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Content, tt.want)
		})
	}
}

func TestBrowseURLRequestAndResult(t *testing.T) {
	longPage := strings.Repeat("ß", browseMaxPageChars+7)
	tests := []struct {
		name     string
		args     any
		reply    string
		wantBody map[string]any
		want     browseResult
		summary  string
		isError  bool
	}{
		{
			name:     "one URL as a string",
			args:     map[string]any{"urls": "https://go.dev/doc/"},
			reply:    `{"results":[{"url":"https://go.dev/doc/","raw_content":"# Docs\n\nRead them.","images":[]}],"failed_results":[],"response_time":0.9}`,
			wantBody: map[string]any{"urls": []any{"https://go.dev/doc/"}, "format": "markdown", "extract_depth": "basic"},
			want:     browseResult{Results: []browsePage{{URL: "https://go.dev/doc/", Content: "# Docs\n\nRead them."}}, Failed: []browseFailure{}},
			summary:  "1 page",
		},
		{
			name: "array with query, duplicate and a failure",
			args: map[string]any{"urls": []string{"https://a.test/x", "HTTP://b.test", "https://a.test/x", "https://c.test"}, "query": "install steps"},
			reply: `{"results":[{"url":"https://a.test/x","raw_content":"step 1 [...] step 2"},{"url":"http://b.test","raw_content":"b"}],
				"failed_results":[{"url":"https://c.test","error":"Failed to fetch url"}],"response_time":"2.1"}`,
			wantBody: map[string]any{"urls": []any{"https://a.test/x", "HTTP://b.test", "https://c.test"}, "format": "markdown",
				"extract_depth": "basic", "query": "install steps", "chunks_per_source": float64(3)},
			want: browseResult{
				Results: []browsePage{{URL: "https://a.test/x", Content: "step 1 [...] step 2"}, {URL: "http://b.test", Content: "b"}},
				Failed:  []browseFailure{{URL: "https://c.test", Error: "Failed to fetch url"}},
			},
			summary: "2 pages (1 failed)",
		},
		{
			name:     "long page is cut",
			args:     map[string]any{"urls": []string{"https://long.test"}},
			reply:    fmt.Sprintf(`{"results":[{"url":"https://long.test","raw_content":%q}]}`, longPage),
			wantBody: map[string]any{"urls": []any{"https://long.test"}, "format": "markdown", "extract_depth": "basic"},
			want: browseResult{Results: []browsePage{{URL: "https://long.test", Content: strings.Repeat("ß", browseMaxPageChars) +
				fmt.Sprintf("\n… [page cut at %d of %d characters]", browseMaxPageChars, browseMaxPageChars+7)}}, Failed: []browseFailure{}},
			summary: "1 page",
		},
		{
			name:     "every page failed",
			args:     map[string]any{"urls": []string{"https://gone.test", "https://blocked.test"}},
			reply:    `{"results":[],"failed_results":[{"url":"https://gone.test","error":"404 Not Found"},{"url":"https://blocked.test","error":{"message":"robots"}}]}`,
			wantBody: map[string]any{"urls": []any{"https://gone.test", "https://blocked.test"}, "format": "markdown", "extract_depth": "basic"},
			want: browseResult{Results: []browsePage{}, Failed: []browseFailure{
				{URL: "https://gone.test", Error: "404 Not Found"}, {URL: "https://blocked.test", Error: "robots"},
			}},
			summary: "0 pages (2 failed)",
			isError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeTavily(t, jsonReply(200, tt.reply))
			_, bu := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey})
			res, err := callTool(t, context.Background(), bu, tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.isError, res.IsError, res.Content)
			assert.Equal(t, tt.summary, res.Summary)

			reqs := fake.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, http.MethodPost, reqs[0].Method)
			assert.Equal(t, "/extract", reqs[0].Path)
			assert.Equal(t, "Bearer "+testTavilyKey, reqs[0].Auth)
			assert.NotContains(t, reqs[0].Raw, testTavilyKey)
			assert.Equal(t, tt.wantBody, reqs[0].Body)

			var got browseResult
			require.NoError(t, json.Unmarshal([]byte(res.Content), &got))
			assert.Equal(t, webUntrustedNote, got.Note)
			got.Note = ""
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBrowseURLRejectsBadURLs(t *testing.T) {
	fake := newFakeTavily(t, jsonReply(200, `{"results":[]}`))
	_, bu := webTestTools(t, Config{BaseURL: fake.srv.URL, APIKey: testTavilyKey})
	six := []string{"https://1.test", "https://2.test", "https://3.test", "https://4.test", "https://5.test", "https://6.test"}
	tests := []struct {
		name string
		args any
		want string
	}{
		{"not JSON", `{"urls":[`, "not a valid JSON object"},
		{"missing", map[string]any{}, "urls is required"},
		{"null", `{"urls":null}`, "urls is required"},
		{"number", map[string]any{"urls": 3}, "urls must be a URL string or an array of URL strings"},
		{"array of numbers", map[string]any{"urls": []int{1}}, "urls must be a URL string or an array of URL strings"},
		{"empty array", map[string]any{"urls": []string{}}, "urls is empty"},
		{"empty string", map[string]any{"urls": " "}, "urls contains an empty URL"},
		{"unknown argument", map[string]any{"urls": "https://go.dev", "depth": "advanced"}, `unknown argument "depth"`},
		{"file scheme", map[string]any{"urls": "file:///etc/passwd"}, "must start with http:// or https://"},
		{"ftp scheme", map[string]any{"urls": []string{"https://ok.test", "ftp://files.test/a"}}, `URL "ftp://files.test/a" must start with http:// or https://`},
		{"javascript", map[string]any{"urls": "javascript:alert(1)"}, "must start with http:// or https://"},
		{"no scheme", map[string]any{"urls": "go.dev/doc"}, "must start with http:// or https://"},
		{"no host", map[string]any{"urls": "https:///path"}, "has no host"},
		{"whitespace", map[string]any{"urls": "https://go.dev/a b"}, "contains whitespace"},
		{"bad escape", map[string]any{"urls": "https://go.dev/%zz"}, "is not valid"},
		{"too long", map[string]any{"urls": "https://x.test/" + strings.Repeat("a", browseMaxURLLen)}, "longer than 2048 characters"},
		{"six URLs", map[string]any{"urls": six}, "urls has 6 URLs; at most 5 per call"},
		{"long query", map[string]any{"urls": "https://go.dev", "query": strings.Repeat("q", 401)}, "query is 401 characters; at most 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callTool(t, context.Background(), bu, tt.args)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, resultError(t, res), tt.want)
		})
	}
	t.Run("credentials are refused and not echoed", func(t *testing.T) {
		res, err := callTool(t, context.Background(), bu, map[string]any{"urls": "https://alice:s3cr3tpw@intranet.test/x"})
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "https://intranet.test/x contains credentials")
		assert.NotContains(t, res.Content, "s3cr3tpw")
		assert.NotContains(t, res.Content, "alice")
	})
	assert.Empty(t, fake.requests(), "invalid URLs never reach Tavily")
}

func TestWebSummarizeCall(t *testing.T) {
	websearch, browseURL := webTestTools(t, Config{})
	ws, bu := websearch.(tools.CallSummarizer), browseURL.(tools.CallSummarizer)
	tests := []struct {
		tool tools.CallSummarizer
		args string
		want string
	}{
		{ws, `{"query":"go  generics\ntutorial"}`, `"go generics tutorial"`},
		{ws, `{"query":"release notes","topic":"news","time_range":"week"}`, `"release notes" (news, week)`},
		{ws, `{"query":"x","topic":"general"}`, `"x"`},
		{bu, `{"urls":"https://go.dev/doc/"}`, "https://go.dev/doc/"},
		{bu, `{"urls":["https://a.test","https://b.test","https://c.test"],"query":"install"}`, `https://a.test +2 more "install"`},
		{bu, `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.tool.SummarizeCall(json.RawMessage(tt.args)))
		})
	}
}

func TestFlexFloat(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{`1.67`, 1.67}, {`"1.67"`, 1.67}, {`" 2 "`, 2}, {`null`, 0}, {`"soon"`, 0}, {`true`, 0}, {`0`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var f flexFloat
			require.NoError(t, json.Unmarshal([]byte(tt.in), &f))
			assert.InDelta(t, tt.want, float64(f), 1e-9)
		})
	}
}
