package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/tools"
)

// attemptKey carries an *attemptState from Stream to the doer through the
// request context, so concurrent Streams on one provider never share state.
type attemptKey struct{}

// attemptState is one HTTP attempt. The doer runs synchronously inside
// go-openai's call on the Stream goroutine, so no locking is needed.
type attemptState struct {
	req *Request
	// activity is called whenever a byte of the response arrives.
	activity func()

	// Set by the doer.
	rewriteErr error
	status     int // an HTTP error status, 0 on success
	errBody    []byte
	retryAfter time.Duration
	sse        *sseBody
}

// openRouterDoer is go-openai's HTTPDoer: it adds the attribution headers,
// rewrites the body with the fields go-openai lacks, keeps error bodies and
// Retry-After (go-openai drops the headers), and filters the SSE stream.
type openRouterDoer struct {
	client         *http.Client
	referer, title string
}

const maxErrorBody = 64 << 10

func (d *openRouterDoer) Do(r *http.Request) (*http.Response, error) {
	at, _ := r.Context().Value(attemptKey{}).(*attemptState)
	r = r.Clone(r.Context())
	r.Header.Set("HTTP-Referer", d.referer)
	r.Header.Set("X-Title", d.title)
	r.Header.Set("X-OpenRouter-Title", d.title)
	if at != nil && at.req != nil && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err == nil {
			body, err = rewriteBody(body, at.req)
		}
		if err != nil {
			at.rewriteErr = err
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := d.client.Do(r)
	if err != nil || at == nil {
		return resp, err
	}
	at.activity()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 || isHTML(resp.Header.Get("Content-Type")) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		at.status = resp.StatusCode
		at.errBody = body
		at.retryAfter = parseRetryAfter(resp.Header, time.Now())
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	at.sse = newSSEBody(resp.Body, at.activity)
	resp.Body = at.sse
	return resp, nil
}

// isHTML reports an HTML content type: a proxy's or captive portal's page
// instead of an event stream, even with status 200.
func isHTML(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(contentType))
	return strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml")
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date (also the
// non-standard retry-after-ms); 0 means absent or in the past.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// rewriteBody adds what go-openai's ChatCompletionRequest cannot express:
// reasoning {effort}, the assistant's reasoning and reasoning_details passed
// back, and an always-present content on tool (and plain) messages. Keys are
// re-encoded in sorted order, so identical requests give identical bytes.
func rewriteBody(body []byte, req *Request) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	if req.Reasoning != "" {
		eff, _ := json.Marshal(req.Reasoning)
		top["reasoning"] = json.RawMessage(`{"effort":` + string(eff) + `}`)
	}
	caching := NeedsCacheBreakpoints(req.Model)
	if raw, ok := top["messages"]; ok {
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, fmt.Errorf("request messages: %w", err)
		}
		if len(msgs) != len(req.Messages) {
			return nil, fmt.Errorf("request messages: %d encoded for %d", len(msgs), len(req.Messages))
		}
		for i, m := range req.Messages {
			wm := msgs[i]
			if m.Role == RoleAssistant {
				if m.Reasoning != "" {
					wm["reasoning"], _ = json.Marshal(m.Reasoning)
				}
				if len(m.ReasoningDetails) > 0 && json.Valid(m.ReasoningDetails) {
					wm["reasoning_details"] = m.ReasoningDetails
				}
			}
			// go-openai's omitempty drops empty content; an empty tool result
			// must still carry it. Assistant tool-call messages may omit it.
			if _, ok := wm["content"]; !ok && !(m.Role == RoleAssistant && len(m.ToolCalls) > 0) {
				wm["content"] = json.RawMessage(`""`)
			}
		}
		if caching {
			addCacheBreakpoints(msgs, req.Messages)
		}
		enc, err := marshalNoEscape(msgs)
		if err != nil {
			return nil, err
		}
		top["messages"] = enc
	}
	return marshalNoEscape(top)
}

// NeedsCacheBreakpoints reports models whose upstream caches a prompt
// prefix only at explicit cache_control breakpoints when reached through
// OpenRouter (Anthropic's Claude, Google's Gemini). Others cache on their own
// and get no cache_control at all.
func NeedsCacheBreakpoints(model string) bool {
	return strings.HasPrefix(model, "anthropic/") || strings.HasPrefix(model, "google/gemini")
}

// maxCacheBreakpoints is Anthropic's limit of cache_control breakpoints.
const maxCacheBreakpoints = 4

// addCacheBreakpoints marks the system message and the newest user and tool
// messages (at most maxCacheBreakpoints in all) with cache_control
// {type: ephemeral}, their text becoming one content part: the text itself,
// and so the cached prefix, keeps its bytes.
func addCacheBreakpoints(wire []map[string]json.RawMessage, msgs []Message) {
	mark := func(i int) bool {
		var text string
		if json.Unmarshal(wire[i]["content"], &text) != nil || text == "" {
			return false
		}
		part, err := marshalNoEscape([]map[string]any{{
			"type": "text", "text": text, "cache_control": map[string]string{"type": "ephemeral"},
		}})
		if err != nil {
			return false
		}
		wire[i]["content"] = part
		return true
	}
	left := maxCacheBreakpoints
	if len(msgs) > 0 && msgs[0].Role == RoleSystem && mark(0) {
		left--
	}
	// The newest messages: the next request reads everything up to them
	// from the cache.
	for i := len(msgs) - 1; i > 0 && left > 1; i-- {
		if msgs[i].Role == RoleUser || msgs[i].Role == RoleTool {
			if mark(i) {
				left--
			}
		}
	}
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// maxSSELine bounds one line of the event stream. A server that sends a
// longer line (or never ends one) fails the request instead of growing
// Fido's memory without limit.
var maxSSELine = 16 << 20

// sseBody sits between the HTTP body and go-openai's stream reader. It
// passes on only `data:` lines: SSE comments such as ": OPENROUTER
// PROCESSING", blank lines and other fields never reach go-openai (which
// would count them against its empty-message limit and pile them into its
// unbounded error accumulator). It reports every data line to the idle
// watchdog (keep-alive comments do not count), terminates a final line that
// lacks its newline (go-openai drops it), notes [DONE], keeps the payload of
// a `data: {"error":…}` line (go-openai swallows it), keeps a bounded sample
// of anything that is not SSE at all (an HTML page, a plain JSON error) and
// stops at a line longer than maxSSELine.
type sseBody struct {
	src     io.ReadCloser
	br      *bufio.Reader
	onData  func()
	line    []byte
	out     []byte
	err     error
	sawDone bool
	sawData bool
	tooLong bool
	errData []byte
	bare    bytes.Buffer // non-SSE JSON lines, e.g. a plain error object
	nonSSE  bytes.Buffer // the first maxErrorBody bytes of non-SSE lines
	maxLine int
	total   int64
	tooMuch bool
}

// maxStreamBytes bounds the data of one answer: a server that streams
// without end fails the request instead of filling Fido's memory.
var maxStreamBytes int64 = 256 << 20

// errSSELineTooLong ends a stream whose line exceeds maxSSELine;
// errStreamTooLong one whose data exceeds maxStreamBytes.
var (
	errSSELineTooLong = errors.New("stream line too long")
	errStreamTooLong  = errors.New("stream too long")
)

func newSSEBody(src io.ReadCloser, onData func()) *sseBody {
	return &sseBody{src: src, br: bufio.NewReaderSize(src, 32<<10), onData: onData, maxLine: maxSSELine}
}

func (b *sseBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, err := b.readLine()
		if err != nil {
			b.err = err
			if err == io.EOF && len(line) > 0 {
				line = append(line, '\n')
			}
		}
		if len(line) > 0 {
			b.out = b.inspect(line)
		}
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// readLine reads one line (with its newline) into b.line, at most maxLine bytes.
func (b *sseBody) readLine() ([]byte, error) {
	b.line = b.line[:0]
	for {
		frag, err := b.br.ReadSlice('\n')
		if len(b.line)+len(frag) > b.maxLine {
			b.tooLong = true
			b.line = nil // let the partial line go
			return nil, errSSELineTooLong
		}
		b.line = append(b.line, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return b.line, err
	}
}

var errorFirst = regexp.MustCompile(`^\{\s*"error"\s*:`)

// inspect returns what of line go-openai gets (nil: nothing).
func (b *sseBody) inspect(line []byte) []byte {
	t := bytes.TrimSpace(line)
	switch {
	case len(t) == 0, t[0] == ':':
		return nil
	case bytes.HasPrefix(t, []byte("data:")):
		b.sawData = true
		b.onData()
		if b.total += int64(len(line)); b.total > maxStreamBytes {
			b.tooMuch, b.err = true, errStreamTooLong
			return nil
		}
		payload := bytes.TrimSpace(t[len("data:"):])
		if string(payload) == "[DONE]" {
			b.sawDone = true
		} else if b.errData == nil && errorFirst.Match(payload) {
			b.errData = append([]byte(nil), payload...)
		}
		return line
	case bytes.HasPrefix(t, []byte("event:")), bytes.HasPrefix(t, []byte("id:")), bytes.HasPrefix(t, []byte("retry:")):
		return nil
	}
	if t[0] == '{' && b.bare.Len() < maxErrorBody {
		b.bare.Write(t[:min(len(t), maxErrorBody-b.bare.Len())])
	}
	if b.nonSSE.Len() < maxErrorBody {
		b.nonSSE.Write(line[:min(len(line), maxErrorBody-b.nonSSE.Len())])
	}
	return nil
}

// notSSE is a sample of the body when the server sent no event stream at
// all (no data line), e.g. an HTML page with status 200; nil otherwise.
func (b *sseBody) notSSE() []byte {
	if b.sawData || b.nonSSE.Len() == 0 {
		return nil
	}
	return b.nonSSE.Bytes()
}

// errorPayload is the JSON of an error the stream carried outside normal
// chunks, or nil.
func (b *sseBody) errorPayload() []byte {
	if b.errData != nil {
		return b.errData
	}
	if b.bare.Len() > 0 && gjson.GetBytes(b.bare.Bytes(), "error").Exists() {
		return b.bare.Bytes()
	}
	return nil
}

func (b *sseBody) Close() error { return b.src.Close() }

// httpError words an HTTP error response for the user.
func httpError(label string, status int, body []byte, retryAfter time.Duration) *ProviderError {
	e := &ProviderError{Status: status, RetryAfter: retryAfter, Code: strconv.Itoa(status)}
	detail := errorDetail(body)
	if c := gjson.GetBytes(body, "error.code"); c.Exists() && c.String() != "" {
		e.Code = c.String()
	}
	withDetail := func(s string) string {
		if detail == "" {
			return s
		}
		return s + ": " + detail
	}
	switch {
	case status >= 200 && status < 300:
		// Only an HTML page gets here with a success status.
		e.Code = ""
		e.Message = withDetail(fmt.Sprintf("%s answered %d with a web page instead of a model stream (a proxy, captive portal or wrong FIDO_BASE_URL?)", label, status))
	case status == 401:
		e.Message = label + " rejected the API key (401): check OPENROUTER_API_KEY"
	case status == 402:
		e.Message = withDetail(label + " says the account is out of credits (402)")
	case status == 403:
		e.Message = withDetail(label + " refused the request (403)")
	case status == 404:
		e.Message = withDetail(label + " does not know this model or endpoint (404)")
	case status == 408:
		e.Message, e.Retryable = withDetail(label+" timed out (408)"), true
	case status == 409:
		e.Message, e.Retryable = withDetail(label+" reported a conflict (409)"), true
	case status == 429:
		m := label + " is rate limiting requests (429)"
		if retryAfter > 0 {
			m += fmt.Sprintf("; retry after %s", shortDuration(retryAfter))
		}
		e.Message, e.Retryable = withDetail(m), true
	case status >= 500:
		e.Message, e.Retryable = withDetail(fmt.Sprintf("%s is unavailable (%d)", label, status)), true
	default:
		e.Message = withDetail(fmt.Sprintf("%s rejected the request (%d)", label, status))
	}
	return e
}

// errorDetail extracts one short line from an error body: the JSON error
// message (with the upstream provider's raw message when OpenRouter only says
// "Provider returned error"), an HTML page's title, or the trimmed text.
func errorDetail(body []byte) string {
	if gjson.ValidBytes(body) {
		root := gjson.ParseBytes(body)
		msg := root.Get("error.message").String()
		if msg == "" {
			msg = root.Get("message").String()
		}
		if raw := root.Get("error.metadata.raw").String(); raw != "" && raw != msg {
			if r := gjson.Get(raw, "error.message").String(); r != "" {
				raw = r
			}
			msg = strings.TrimSpace(msg + " — " + raw)
		}
		if p := root.Get("error.metadata.provider_name").String(); p != "" && msg != "" {
			msg += " [" + p + "]"
		}
		return clip(oneLine(msg), 240)
	}
	s := string(body)
	if looksHTML(s) {
		if m := titleRE.FindStringSubmatch(s); m != nil {
			if t := oneLine(html.UnescapeString(tagRE.ReplaceAllString(m[1], ""))); t != "" {
				return clip(t, 160)
			}
		}
		s = scriptRE.ReplaceAllString(s, " ")
		s = html.UnescapeString(tagRE.ReplaceAllString(s, " "))
	}
	return clip(oneLine(s), 160)
}

var (
	titleRE  = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	tagRE    = regexp.MustCompile(`(?s)<[^>]*>`)
	scriptRE = regexp.MustCompile(`(?is)<(script|style)[^>]*>.*?</(script|style)>`)
)

func looksHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 512)]))
	return strings.HasPrefix(head, "<") && (strings.Contains(head, "<html") || strings.Contains(head, "<!doctype") ||
		strings.Contains(head, "<head") || strings.Contains(head, "<body") || strings.Contains(head, "<title"))
}

// oneLine collapses all whitespace runs to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n runes, marking the cut with an ellipsis.
func clip(s string, n int) string { return tools.ShortenTo(s, n) }
