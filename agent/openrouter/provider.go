package openrouter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/text"
)

const (
	defaultReferer    = "https://github.com/fido-nvim/fido"
	defaultTitle      = "Fido"
	defaultMaxRetries = 3
	// maxRetryAfter is the longest server-requested wait Fido sits through;
	// beyond it the error is reported instead of silently waiting minutes.
	maxRetryAfter = 60 * time.Second
)

// Config configures a provider for OpenRouter or any OpenAI-compatible
// endpoint. Zero fields get their defaults.
type Config struct {
	// BaseURL defaults to agent.DefaultBaseURL (FIDO_BASE_URL).
	BaseURL string
	// APIKey is OPENROUTER_API_KEY. It is never logged and never part of an error.
	APIKey string
	// Referer and Title are OpenRouter's attribution headers (HTTP-Referer,
	// X-Title and X-OpenRouter-Title); they default to the Fido project URL and "Fido".
	Referer, Title string
	// HTTPClient is optional (default: one on NewTransport); its Timeout
	// must be zero or longer than any answer.
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
	// agent.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Sleep waits d or until ctx is done (then it returns ctx.Err()). Tests
	// replace it to observe retry waits without sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
	// Preferences, when set, is sent as OpenRouter's provider routing.
	Preferences *ProviderPreferences
	// ReadPace, when set, makes a reader that has caught up with a slow
	// stream read it at most once per ReadPace (see streamBody); a UI that
	// shows changes every so often sets it to about that interval.
	ReadPace time.Duration
}

// NewTransport is the provider's default transport: Go's default (proxy
// from the environment, its dial and handshake timeouts, kept-alive
// connections) speaking HTTP/1.1 only, as OpenAI's official SDKs do by
// default. Over HTTP/2 every frame of a stream wakes the connection's read
// loop and then the body's reader, whatever pace the reader keeps; over
// TLS the host spent about 70 % more CPU on a stream that way (`make
// bench-render-tls` with Go's default transport in its place). Concurrent requests (subagents) each take a connection of their
// own instead of sharing one.
//
// It is built afresh, not cloned from http.DefaultTransport: once that has
// made a TLS connection its TLS config offers h2, and a clone would then
// agree on HTTP/2 with the server and talk HTTP/1.1 to it.
func NewTransport() *http.Transport {
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		Protocols:             new(http.Protocols),
	}
	t.Protocols.SetHTTP1(true)
	return t
}

// Provider streams chat completions from OpenRouter or any OpenAI-compatible
// endpoint. It is safe for concurrent use: every Stream has its own state.
type Provider struct {
	cfg Config
	// label names the service in user-facing errors.
	label string
	heads headCache
}

var _ agent.Provider = (*Provider)(nil)

// New builds a provider.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = agent.DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Referer == "" {
		cfg.Referer = defaultReferer
	}
	if cfg.Title == "" {
		cfg.Title = defaultTitle
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: NewTransport()}
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
		cfg.IdleTimeout = agent.DefaultIdleTimeout
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	return &Provider{cfg: cfg, label: serviceLabel(cfg.BaseURL)}
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

// Stream implements agent.Provider. A cancelled ctx returns ctx.Err() at
// once (also during a retry wait or a stalled stream); every other failure
// is an *agent.ProviderError worded for the user. Retries happen only while
// nothing of this call has reached onDelta (DeltaStatus notes do not count).
func (p *Provider) Stream(ctx context.Context, req agent.Request, onDelta func(agent.Delta)) (agent.Response, error) {
	if onDelta == nil {
		onDelta = func(agent.Delta) {}
	}
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	body, err := encodeRequest(req, p.cfg.Preferences, &p.heads)
	if err != nil {
		return agent.Response{}, p.scrub(&agent.ProviderError{Message: "cannot build the request: " + text.Collapse(err.Error())})
	}
	for attempt := 0; ; attempt++ {
		resp, perr, delivered := p.attempt(ctx, body, onDelta)
		if err := ctx.Err(); err != nil {
			return agent.Response{}, err
		}
		if perr == nil {
			return resp, nil
		}
		perr.Partial = delivered
		retry := perr.Retryable && !delivered && attempt < p.cfg.MaxRetries && perr.RetryAfter <= maxRetryAfter
		if !retry {
			if attempt > 0 && perr.Retryable && !delivered {
				perr.Message += fmt.Sprintf(" (gave up after %d %s)", attempt, text.Plural(attempt, "retry", "retries"))
			}
			return agent.Response{}, p.scrub(perr)
		}
		wait := perr.RetryAfter
		if wait <= 0 {
			wait = p.cfg.Backoff(attempt + 1)
		}
		onDelta(agent.Delta{Kind: agent.DeltaStatus, Text: p.scrubText(fmt.Sprintf("retrying in %s after %s (attempt %d of %d)",
			text.Duration(wait), retryReason(perr), attempt+2, p.cfg.MaxRetries+1))})
		if err := p.cfg.Sleep(ctx, wait); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return agent.Response{}, cerr
			}
			return agent.Response{}, err
		}
	}
}

// attempt makes one HTTP request and reads its stream to the end. It
// returns a nil error when ctx was cancelled, and whether any delta reached
// onDelta.
func (p *Provider) attempt(ctx context.Context, body []byte, onDelta func(agent.Delta)) (agent.Response, *agent.ProviderError, bool) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := startWatchdog(p.cfg.IdleTimeout, cancel)
	defer wd.stop()

	var conn net.Conn // the response's connection (see streamBody.quiet)
	tctx := httptrace.WithClientTrace(actx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { conn = i.Conn }})
	hreq, err := http.NewRequestWithContext(tctx, http.MethodPost, p.cfg.BaseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return agent.Response{}, &agent.ProviderError{Message: "cannot build the request: " + text.Collapse(err.Error())}, false
	}
	p.setHeaders(hreq.Header)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("Cache-Control", "no-cache")
	hresp, err := p.cfg.HTTPClient.Do(hreq)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return agent.Response{}, nil, false
		case wd.stalled():
			return agent.Response{}, p.stallError(), false
		}
		return agent.Response{}, connectError(p.label, err), false
	}
	defer hresp.Body.Close()
	wd.touch()
	if hresp.StatusCode < 200 || hresp.StatusCode >= 400 || isHTML(hresp.Header.Get("Content-Type")) {
		errBody, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
		switch {
		case ctx.Err() != nil:
			return agent.Response{}, nil, false
		case wd.stalled():
			return agent.Response{}, p.stallError(), false
		}
		return agent.Response{}, httpError(p.label, hresp.StatusCode, errBody, parseRetryAfter(hresp.Header, time.Now())), false
	}

	acc := newAccumulator(onDelta)
	// Text waits in acc only while the read buffer holds more chunks: it
	// is handed on before every read from the network.
	stream := &streamBody{r: hresp.Body, flush: acc.flush, pace: p.cfg.ReadPace, ctx: actx}
	// An HTTP/1.1 connection is this response's alone until its body is
	// closed; HTTP/2 shares one among streams.
	if p.cfg.ReadPace > 0 && hresp.ProtoMajor == 1 && conn != nil {
		stream.quiet = quieter(conn)
	}
	defer stream.close()
	events := newEventReader(stream, wd)
	done := actx.Done()
	var recvErr error
	for {
		payload, err := events.next()
		if err != nil {
			recvErr = err
			break
		}
		if perr := acc.chunk(payload, events.errorEvent); perr != nil {
			acc.flush()
			perr.Message = p.label + " reported an error mid-answer: " + perr.Message
			return agent.Response{}, perr, acc.delivered
		}
		// A cancel stops the deltas at once, even while the read buffer
		// still holds chunks that arrived before it.
		if closed(done) {
			recvErr = actx.Err()
			break
		}
	}
	return p.finish(ctx, hresp.Header.Get("X-Generation-Id"), acc, events, wd, recvErr)
}

// finish words how a stream that ended without an error chunk ended.
func (p *Provider) finish(ctx context.Context, genID string, acc *accumulator, events *eventReader, wd *watchdog, recvErr error) (agent.Response, *agent.ProviderError, bool) {
	fail := func(e *agent.ProviderError) (agent.Response, *agent.ProviderError, bool) {
		return agent.Response{}, e, acc.delivered
	}
	if ctx.Err() == nil {
		acc.flush() // what came before the end (a cancel drops it)
	}
	switch {
	case ctx.Err() != nil:
		return agent.Response{}, nil, acc.delivered
	case events.bareJSON() != nil && gjson.GetBytes(events.bareJSON(), "error").Exists():
		perr := streamError(gjson.GetBytes(events.bareJSON(), "error"))
		perr.Message = p.label + " reported an error mid-answer: " + perr.Message
		return fail(perr)
	case events.tooMuch:
		return fail(&agent.ProviderError{Message: fmt.Sprintf("%s sent more than %s in one answer; the answer was stopped", p.label, text.Size(events.maxBytes))})
	case events.tooLong:
		return fail(&agent.ProviderError{Message: fmt.Sprintf("%s sent a stream line longer than %s; the answer was stopped", p.label, text.Size(int64(events.maxLine)))})
	case wd.stalled():
		return fail(p.stallError())
	case events.notSSE() != nil:
		return fail(notStreamError(p.label, events.notSSE()))
	}
	if !events.sawDone && (acc.finishReason == "" || acc.finishReason == "error") {
		// No [DONE] and no finish reason: the answer may be truncated anywhere.
		// A stream that reported its finish reason but lost its [DONE] (or its
		// usage chunk) is accepted, since nothing of the answer is missing.
		msg := "the connection to " + p.label + " was cut before the answer finished"
		if recvErr != nil && !errors.Is(recvErr, io.EOF) {
			msg += " (" + text.Collapse(recvErr.Error()) + ")"
		}
		return fail(&agent.ProviderError{Message: msg, Retryable: true})
	}
	if acc.finishReason == "error" {
		return fail(&agent.ProviderError{Message: p.label + " ended the answer with an error and no detail", Retryable: true})
	}
	if genID == "" {
		genID = acc.id
	}
	return acc.response(genID), nil, acc.delivered
}

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// setHeaders adds the key and OpenRouter's attribution headers.
func (p *Provider) setHeaders(h http.Header) {
	if p.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	h.Set("HTTP-Referer", p.cfg.Referer)
	h.Set("X-Title", p.cfg.Title)
	h.Set("X-OpenRouter-Title", p.cfg.Title)
}

func (p *Provider) stallError() *agent.ProviderError {
	return &agent.ProviderError{
		Message: fmt.Sprintf("no data from %s for %s (keep-alives do not count): the stream stalled; FIDO_IDLE_TIMEOUT or setup({ idle_timeout_ms = … }) sets this limit",
			p.label, text.Duration(p.cfg.IdleTimeout)),
		Retryable: true,
	}
}

// scrub removes the API key from everything the user could see.
func (p *Provider) scrub(e *agent.ProviderError) *agent.ProviderError {
	e.Message = p.scrubText(e.Message)
	e.Code = p.scrubText(e.Code)
	return e
}

func (p *Provider) scrubText(s string) string {
	if p.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, p.cfg.APIKey, "[redacted]")
}
