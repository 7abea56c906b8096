package agent

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/tools"
)

// DefaultOpenRouterBaseURL is the base URL used when FIDO_BASE_URL is unset.
const DefaultOpenRouterBaseURL = "https://openrouter.ai/api/v1"

const (
	defaultReferer    = "https://github.com/fido-nvim/fido"
	defaultTitle      = "Fido"
	defaultMaxRetries = 3
	// DefaultIdleTimeout is how long a stream may go without a data line.
	DefaultIdleTimeout = 120 * time.Second
	// maxRetryAfter is the longest server-requested wait Fido sits through;
	// beyond it the error is reported instead of silently waiting minutes.
	maxRetryAfter = 60 * time.Second
)

// OpenRouterConfig configures an OpenRouter (or any OpenAI-compatible) provider.
type OpenRouterConfig struct {
	// BaseURL defaults to DefaultOpenRouterBaseURL (FIDO_BASE_URL).
	BaseURL string
	// APIKey is OPENROUTER_API_KEY. It is never logged and never part of an error.
	APIKey string
	// Referer and Title are OpenRouter's attribution headers (HTTP-Referer,
	// X-Title and X-OpenRouter-Title); they default to the Fido project URL and "Fido".
	Referer, Title string
	// HTTPClient is optional; its Timeout must be zero or longer than any answer.
	HTTPClient *http.Client
	// MaxRetries is the number of retries after the first attempt: 0 means the
	// default (3), a negative value disables retries.
	MaxRetries int
	// Backoff is the wait before retry number attempt (1-based) when the server
	// sent no Retry-After. The default is exponential (1s, 2s, 4s, … ≤ 20s) with ±20% jitter.
	Backoff func(attempt int) time.Duration
	// IdleTimeout aborts an attempt that received no data line for this long
	// (FIDO_IDLE_TIMEOUT, setup({ idle_timeout_ms })). Keep-alive comments do
	// not count: a server that only sends keep-alives times out too. Default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Sleep waits d or until ctx is done (then it returns ctx.Err()). Tests
	// replace it to observe retry waits without sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenRouter streams chat completions from OpenRouter or any OpenAI-compatible
// endpoint through go-openai, with the protocol gaps of go-openai v1.43.0
// worked around (see PROTOCOLS.md): extra request fields are added by a
// rewriting HTTPDoer, and every chunk is read raw and parsed with gjson.
type OpenRouter struct {
	cfg    OpenRouterConfig
	client *openai.Client
	// label names the service in user-facing errors.
	label string
}

var _ Provider = (*OpenRouter)(nil)

// NewOpenRouter builds a provider; zero config fields get their defaults.
func NewOpenRouter(cfg OpenRouterConfig) *OpenRouter {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenRouterBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Referer == "" {
		cfg.Referer = defaultReferer
	}
	if cfg.Title == "" {
		cfg.Title = defaultTitle
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = defaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.Backoff == nil {
		cfg.Backoff = defaultBackoff
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = &openRouterDoer{client: cfg.HTTPClient, referer: cfg.Referer, title: cfg.Title}
	// Only data lines reach go-openai (see sseBody); the idle timeout is the
	// guard against a server that sends nothing else.
	oc.EmptyMessagesLimit = math.MaxUint32
	return &OpenRouter{cfg: cfg, client: openai.NewClientWithConfig(oc), label: serviceLabel(cfg.BaseURL)}
}

func serviceLabel(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "the model server"
	}
	if h := u.Hostname(); h == "openrouter.ai" || strings.HasSuffix(h, ".openrouter.ai") {
		return "OpenRouter"
	}
	return "the model server at " + u.Host
}

func defaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := time.Second << min(attempt-1, 5)
	d = min(d, 20*time.Second)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Stream implements Provider. A cancelled ctx returns ctx.Err() at once (also
// during a retry wait or a stalled stream); every other failure is a
// *ProviderError worded for the user. Retries happen only while nothing of
// this call has reached onDelta (DeltaStatus notes do not count).
func (p *OpenRouter) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	creq := buildChatRequest(req)
	for attempt := 0; ; attempt++ {
		resp, perr, delivered := p.attempt(ctx, &req, creq, onDelta)
		if err := ctx.Err(); err != nil {
			return Response{}, err
		}
		if perr == nil {
			return resp, nil
		}
		perr.Partial = delivered
		retry := perr.Retryable && !delivered && attempt < p.cfg.MaxRetries && perr.RetryAfter <= maxRetryAfter
		if !retry {
			if attempt > 0 && perr.Retryable && !delivered {
				perr.Message += fmt.Sprintf(" (gave up after %d %s)", attempt, plural(attempt, "retry", "retries"))
			}
			return Response{}, p.scrub(perr)
		}
		wait := perr.RetryAfter
		if wait <= 0 {
			wait = p.cfg.Backoff(attempt + 1)
		}
		onDelta(Delta{Kind: DeltaStatus, Text: p.scrubText(fmt.Sprintf("retrying in %s after %s (attempt %d of %d)",
			shortDuration(wait), perr.reason(), attempt+2, p.cfg.MaxRetries+1))})
		if err := p.cfg.Sleep(ctx, wait); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return Response{}, cerr
			}
			return Response{}, err
		}
	}
}

// attempt makes one HTTP request and reads its stream to the end.
func (p *OpenRouter) attempt(ctx context.Context, req *Request, creq openai.ChatCompletionRequest, onDelta func(Delta)) (Response, *ProviderError, bool) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stalled atomic.Bool
	watchdog := time.AfterFunc(p.cfg.IdleTimeout, func() {
		stalled.Store(true)
		cancel()
	})
	defer watchdog.Stop()
	at := &attemptState{req: req, activity: func() { watchdog.Reset(p.cfg.IdleTimeout) }}
	actx = context.WithValue(actx, attemptKey{}, at)

	acc := newStreamAccumulator(onDelta)
	stream, err := p.client.CreateChatCompletionStream(actx, creq)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return Response{}, nil, false
		case stalled.Load():
			return Response{}, p.stallError(), false
		case at.status != 0:
			return Response{}, httpError(p.label, at.status, at.errBody, at.retryAfter), false
		case at.rewriteErr != nil:
			return Response{}, &ProviderError{Message: "cannot build the request: " + at.rewriteErr.Error()}, false
		}
		return Response{}, p.connectError(err), false
	}
	defer stream.Close()
	if at.status != 0 {
		// A success status with an HTML page (see openRouterDoer.Do).
		return Response{}, httpError(p.label, at.status, at.errBody, at.retryAfter), false
	}
	genID := stream.Header().Get("X-Generation-Id")

	var recvErr error
	for {
		raw, err := stream.RecvRaw()
		if err != nil {
			recvErr = err
			break
		}
		if raw == nil {
			// go-openai swallowed a data line it took for an error; the
			// SSE filter kept its payload.
			break
		}
		if perr := acc.chunk(raw); perr != nil {
			perr.Message = p.label + " reported an error mid-answer: " + perr.Message
			return Response{}, perr, acc.delivered
		}
	}
	switch {
	case ctx.Err() != nil:
		return Response{}, nil, acc.delivered
	case at.sse != nil && at.sse.errorPayload() != nil:
		perr := streamError(gjson.GetBytes(at.sse.errorPayload(), "error"))
		perr.Message = p.label + " reported an error mid-answer: " + perr.Message
		return Response{}, perr, acc.delivered
	case at.sse != nil && at.sse.tooMuch:
		return Response{}, &ProviderError{Message: fmt.Sprintf("%s sent more than %s in one answer; the answer was stopped", p.label, sizeText(maxStreamBytes))}, acc.delivered
	case at.sse != nil && at.sse.tooLong:
		return Response{}, &ProviderError{Message: fmt.Sprintf("%s sent a stream line longer than %s; the answer was stopped", p.label, sizeText(int64(maxSSELine)))}, acc.delivered
	case stalled.Load():
		return Response{}, p.stallError(), acc.delivered
	case at.sse != nil && at.sse.notSSE() != nil:
		return Response{}, notStreamError(p.label, at.sse.notSSE()), acc.delivered
	}
	done := at.sse != nil && at.sse.sawDone
	if !done && (acc.finishReason == "" || acc.finishReason == "error") {
		// No [DONE] and no finish reason: the answer may be truncated anywhere.
		// A stream that reported its finish reason but lost its [DONE] (or its
		// usage chunk) is accepted, since nothing of the answer is missing.
		msg := "the connection to " + p.label + " was cut before the answer finished"
		if recvErr != nil && !errors.Is(recvErr, io.EOF) {
			msg += " (" + oneLine(recvErr.Error()) + ")"
		}
		return Response{}, &ProviderError{Message: msg, Retryable: true}, acc.delivered
	}
	if acc.finishReason == "error" {
		return Response{}, &ProviderError{Message: p.label + " ended the answer with an error and no detail", Retryable: true}, acc.delivered
	}
	if genID == "" {
		genID = acc.id
	}
	return acc.response(genID), nil, acc.delivered
}

func (p *OpenRouter) stallError() *ProviderError {
	return &ProviderError{
		Message: fmt.Sprintf("no data from %s for %s (keep-alives do not count): the stream stalled; FIDO_IDLE_TIMEOUT or setup({ idle_timeout_ms = … }) sets this limit",
			p.label, shortDuration(p.cfg.IdleTimeout)),
		Retryable: true,
	}
}

// notStreamError words a 2xx answer that carried no event stream at all.
func notStreamError(label string, sample []byte) *ProviderError {
	what := "something that is not a model stream"
	if looksHTML(string(sample)) {
		what = "a web page instead of a model stream (a proxy, captive portal or wrong FIDO_BASE_URL?)"
	}
	msg := label + " answered with " + what
	if d := errorDetail(sample); d != "" {
		msg += ": " + d
	}
	return &ProviderError{Message: msg}
}

func (p *OpenRouter) connectError(err error) *ProviderError {
	// Retrying cannot fix an unknown host or a bad certificate.
	retry := true
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound || errors.As(err, &certErr) {
		retry = false
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return &ProviderError{Message: "cannot reach " + p.label + ": " + oneLine(err.Error()), Retryable: retry}
}

// scrub removes the API key from everything the user could see.
func (p *OpenRouter) scrub(e *ProviderError) *ProviderError {
	e.Message = p.scrubText(e.Message)
	e.Code = p.scrubText(e.Code)
	return e
}

func (p *OpenRouter) scrubText(s string) string {
	if p.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, p.cfg.APIKey, "[redacted]")
}

// reason is the short cause shown in a retry note, e.g. "429 (rate limited)".
func (e *ProviderError) reason() string {
	switch {
	case e.Status == 429:
		return "429 (rate limited)"
	case e.Status != 0:
		return fmt.Sprintf("%d (%s)", e.Status, strings.ToLower(http.StatusText(e.Status)))
	case e.Code != "":
		return "error " + e.Code
	}
	return e.Message
}

// buildChatRequest converts a Request to go-openai's form. Fields go-openai
// cannot express are added by the doer (see rewriteBody).
func buildChatRequest(req Request) openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		wm := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content}
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				wm.ToolCalls = append(wm.ToolCalls, openai.ToolCall{
					ID:       tc.ID,
					Type:     openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: tc.Name, Arguments: nonEmptyArgs(tc.Arguments)},
				})
			}
		case RoleTool:
			wm.ToolCallID = m.ToolCallID
		}
		msgs = append(msgs, wm)
	}
	return openai.ChatCompletionRequest{
		Model:         req.Model,
		Messages:      msgs,
		Tools:         buildTools(req.Tools),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
}

func buildTools(specs []tools.Spec) []openai.Tool {
	if len(specs) == 0 {
		return nil
	}
	out := make([]openai.Tool, len(specs))
	for i, s := range specs {
		params := json.RawMessage(s.Parameters)
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: s.Name, Description: s.Description, Parameters: params,
		}}
	}
	return out
}

// nonEmptyArgs maps the empty arguments some models send for parameterless
// tools to "{}", which every provider accepts when it is sent back.
func nonEmptyArgs(a string) string {
	if strings.TrimSpace(a) == "" {
		return "{}"
	}
	return a
}

// sizeText words a byte count in MiB, or KiB below one MiB.
func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
