package openrouter

import (
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/text"
)

// maxErrorBody bounds what is kept of an error body or of a body that is
// not an event stream.
const maxErrorBody = 64 << 10

// httpError words an HTTP error response for the user.
func httpError(label string, status int, body []byte, retryAfter time.Duration) *agent.ProviderError {
	e := &agent.ProviderError{Status: status, RetryAfter: retryAfter, Code: strconv.Itoa(status)}
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
			m += fmt.Sprintf("; retry after %s", text.Duration(retryAfter))
		}
		e.Message, e.Retryable = withDetail(m), true
	case status >= 500:
		e.Message, e.Retryable = withDetail(fmt.Sprintf("%s is unavailable (%d)", label, status)), true
	default:
		e.Message = withDetail(fmt.Sprintf("%s rejected the request (%d)", label, status))
	}
	return e
}

// transientStreamCodes are mid-stream error codes worth a retry.
var transientStreamCodes = map[string]bool{
	"server_error": true, "internal_error": true, "overloaded_error": true, "api_error": true,
	"rate_limit_error": true, "timeout": true, "overloaded": true,
}

// streamError words an error object that arrived inside a 200 stream.
func streamError(e gjson.Result) *agent.ProviderError {
	code := e.Get("code").String()
	msg := e.Get("message").String()
	if msg == "" && e.Type == gjson.String {
		msg = e.Str
	}
	if raw := e.Get("metadata.raw").String(); raw != "" && raw != msg {
		msg = strings.TrimSpace(msg + " — " + raw)
	}
	if msg == "" {
		msg = "unknown error"
	}
	retry := transientStreamCodes[code]
	if n, err := strconv.Atoi(code); err == nil {
		retry = n == 408 || n == 409 || n == 429 || n >= 500
	}
	msg = text.ShortenTo(text.Collapse(msg), 240)
	if code != "" {
		msg += " (" + code + ")"
	}
	return &agent.ProviderError{Code: code, Message: msg, Retryable: retry}
}

// notStreamError words a 2xx answer that carried no event stream at all.
func notStreamError(label string, sample []byte) *agent.ProviderError {
	what := "something that is not a model stream"
	if looksHTML(string(sample)) {
		what = "a web page instead of a model stream (a proxy, captive portal or wrong FIDO_BASE_URL?)"
	}
	msg := label + " answered with " + what
	if d := errorDetail(sample); d != "" {
		msg += ": " + d
	}
	return &agent.ProviderError{Message: msg}
}

// connectError words a request that got no answer at all.
func connectError(label string, err error) *agent.ProviderError {
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
	return &agent.ProviderError{Message: "cannot reach " + label + ": " + text.Collapse(err.Error()), Retryable: retry}
}

// retryReason is the short cause shown in a retry note, e.g. "429 (rate limited)".
func retryReason(e *agent.ProviderError) string {
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
		return text.ShortenTo(text.Collapse(msg), 240)
	}
	s := string(body)
	if looksHTML(s) {
		if m := titleRE.FindStringSubmatch(s); m != nil {
			if t := text.Collapse(html.UnescapeString(tagRE.ReplaceAllString(m[1], ""))); t != "" {
				return text.ShortenTo(t, 160)
			}
		}
		s = scriptRE.ReplaceAllString(s, " ")
		s = html.UnescapeString(tagRE.ReplaceAllString(s, " "))
	}
	return text.ShortenTo(text.Collapse(s), 160)
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
