package delegate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

// Status values of a delegate_result.
const (
	StatusCompleted = "completed"
	StatusPartial   = "partial"
	StatusFailed    = "failed"
)

// Stable error codes of a delegate_result.
const (
	CodeNestedDelegation = "nested_delegation_forbidden"
	CodeTimeout          = "timeout"
	CodeCancelled        = "cancelled"
	CodeProviderError    = "provider_error"
	CodeEmptyResult      = "empty_result"
	CodeNoFinalAnswer    = "no_final_answer"
	CodeBusy             = "delegate_busy"
	CodeUnavailable      = "delegate_unavailable"
)

// Bounds applied when normalizing a subagent's output.
const (
	maxSummaryRunes = 4000
	maxFindings     = 50
	maxClaimRunes   = 1000
	maxFileRunes    = 512
	maxListItems    = 20
	maxItemRunes    = 500
	maxErrorRunes   = 1000
)

// Finding is one observation of the subagent, a hypothesis for the parent to verify.
type Finding struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Claim      string `json:"claim"`
	Confidence string `json:"confidence"`
}

// ResultError explains a failed or cut-short delegation.
type ResultError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result is the delegate_result: the only thing of a delegation that enters
// the parent's messages.
type Result struct {
	Type                 string          `json:"type"`
	Identity             *tools.Identity `json:"identity,omitempty"`
	Status               string          `json:"status"`
	Summary              string          `json:"summary"`
	Findings             []Finding       `json:"findings"`
	RecommendedNextSteps []string        `json:"recommended_next_steps"`
	TestsToRun           []string        `json:"tests_to_run"`
	Uncertainties        []string        `json:"uncertainties"`
	Error                *ResultError    `json:"error,omitempty"`
}

// newResult is an empty result with every list present (never null in JSON).
func newResult(id *tools.Identity, status string) Result {
	return Result{
		Type: "delegate_result", Identity: id, Status: status,
		Findings: []Finding{}, RecommendedNextSteps: []string{}, TestsToRun: []string{}, Uncertainties: []string{},
	}
}

// failedResult is a failed delegate_result with a stable error code.
func failedResult(id *tools.Identity, code, summary, message string) Result {
	r := newResult(id, StatusFailed)
	r.Summary = summary
	r.Error = &ResultError{Code: code, Message: bound(message, maxErrorRunes)}
	return r
}

// NestedResult is the failed result a subagent gets when it calls delegate.
func NestedResult(id tools.Identity) Result {
	r := failedResult(&id, CodeNestedDelegation, "Nested delegation is not allowed.",
		"A subagent cannot call delegate; no nested subagent was created.")
	r.RecommendedNextSteps = []string{"Continue the assigned task without calling delegate."}
	return r
}

// rawOutput is the lenient shape a subagent's JSON answer is decoded into.
type rawOutput struct {
	Status               *string           `json:"status"`
	Summary              *string           `json:"summary"`
	Findings             []json.RawMessage `json:"findings"`
	RecommendedNextSteps []json.RawMessage `json:"recommended_next_steps"`
	TestsToRun           []json.RawMessage `json:"tests_to_run"`
	Uncertainties        []json.RawMessage `json:"uncertainties"`
}

func (o rawOutput) recognized() bool {
	return o.Status != nil || o.Summary != nil || o.Findings != nil ||
		o.RecommendedNextSteps != nil || o.TestsToRun != nil || o.Uncertainties != nil
}

// Normalize turns the subagent's final answer into a delegate_result. The
// identity always comes from the runner: whatever the answer says about who
// wrote it is ignored. Malformed output becomes partial with the text as
// summary; an empty answer is failed.
func Normalize(id tools.Identity, content string) Result {
	text := strings.TrimSpace(content)
	if text == "" {
		return failedResult(&id, CodeEmptyResult, "The subagent returned no output.",
			"the subagent's final answer was empty")
	}
	out, ok := extractOutput(text)
	if !ok {
		r := newResult(&id, StatusPartial)
		r.Summary = bound(text, maxSummaryRunes)
		r.Uncertainties = []string{"The subagent did not return the required JSON object; its answer is given verbatim as the summary."}
		return r
	}
	r := newResult(&id, StatusCompleted)
	var notes []string
	if out.Status != nil {
		switch s := strings.ToLower(strings.TrimSpace(*out.Status)); s {
		case StatusCompleted, StatusPartial, StatusFailed:
			r.Status = s
		default:
			r.Status = StatusPartial
			notes = append(notes, fmt.Sprintf("The subagent reported an unknown status %q.", bound(*out.Status, 40)))
		}
	}
	if out.Summary != nil {
		r.Summary = bound(strings.TrimSpace(*out.Summary), maxSummaryRunes)
	}
	dropped := 0
	for _, raw := range out.Findings {
		f, ok := cleanFinding(raw)
		if !ok {
			dropped++
			continue
		}
		if len(r.Findings) == maxFindings {
			dropped++
			continue
		}
		r.Findings = append(r.Findings, f)
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d finding(s) were dropped (malformed or over the limit of %d).", dropped, maxFindings))
	}
	r.RecommendedNextSteps = cleanList(out.RecommendedNextSteps)
	r.TestsToRun = cleanList(out.TestsToRun)
	r.Uncertainties = append(cleanList(out.Uncertainties), notes...)
	if len(r.Uncertainties) > maxListItems+2 {
		r.Uncertainties = r.Uncertainties[:maxListItems+2]
	}
	if r.Summary == "" && len(r.Findings) == 0 {
		if r.Status == StatusCompleted {
			r.Status = StatusPartial
		}
		r.Summary = "The subagent's answer had no summary and no findings."
	}
	return r
}

// extractOutput finds the JSON object in the answer: the whole text, a
// ```json fence, or the first object embedded in prose.
func extractOutput(text string) (rawOutput, bool) {
	if o, ok := decodeOutput(text); ok {
		return o, true
	}
	rest := text
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		body := rest[i+3:]
		nl := strings.IndexByte(body, '\n')
		if nl < 0 {
			break
		}
		body = body[nl+1:] // skip the info string ("json" or nothing)
		end := strings.Index(body, "```")
		if end < 0 {
			break
		}
		if o, ok := decodeOutput(body[:end]); ok {
			return o, true
		}
		rest = body[end+3:]
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			continue
		}
		if o, ok := decodeOutput(string(raw)); ok {
			return o, true
		}
	}
	return rawOutput{}, false
}

func decodeOutput(s string) (rawOutput, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return rawOutput{}, false
	}
	var o rawOutput
	if err := json.Unmarshal([]byte(s), &o); err != nil || !o.recognized() {
		return rawOutput{}, false
	}
	return o, true
}

func cleanFinding(raw json.RawMessage) (Finding, bool) {
	var f struct {
		File       string          `json:"file"`
		Line       json.RawMessage `json:"line"`
		Claim      string          `json:"claim"`
		Confidence string          `json:"confidence"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return Finding{}, false
	}
	claim := strings.TrimSpace(f.Claim)
	if claim == "" {
		return Finding{}, false
	}
	conf := strings.ToLower(strings.TrimSpace(f.Confidence))
	switch conf {
	case "high", "medium", "low":
	default:
		conf = "low"
	}
	return Finding{
		File:       bound(strings.TrimSpace(f.File), maxFileRunes),
		Line:       cleanLine(f.Line),
		Claim:      bound(claim, maxClaimRunes),
		Confidence: conf,
	}, true
}

// cleanLine accepts a number or a numeric string; anything else, or a
// negative value, is 0 ("no particular line").
func cleanLine(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(strings.TrimSpace(s))
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || v < 0 || math.IsNaN(v) || v > math.MaxInt32 {
		return 0
	}
	return int(v)
}

// cleanList keeps the non-empty string items, bounded in count and length.
func cleanList(raws []json.RawMessage) []string {
	out := []string{}
	for _, raw := range raws {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if len(out) == maxListItems {
			break
		}
		out = append(out, bound(s, maxItemRunes))
	}
	return out
}

// bound cuts s to n runes, marking the cut.
func bound(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return text.Shorten(s, n)
}

// Fit encodes r within maxBytes: if it is too big, findings are dropped from
// the end, then lists are shortened, then the summary is truncated, and the
// result is marked partial with an uncertainty noting the cut.
func Fit(r Result, maxBytes int) []byte {
	b := mustJSON(r)
	if maxBytes <= 0 || len(b) <= maxBytes {
		return b
	}
	origFindings := len(r.Findings)
	r.Findings = append([]Finding(nil), r.Findings...)
	r.RecommendedNextSteps = append([]string(nil), r.RecommendedNextSteps...)
	r.TestsToRun = append([]string(nil), r.TestsToRun...)
	r.Uncertainties = append([]string(nil), r.Uncertainties...)
	if r.Status == StatusCompleted {
		r.Status = StatusPartial
	}
	note := func() string {
		return fmt.Sprintf("The result was cut to fit %d bytes: %d of %d findings kept; lists or the summary may be shortened.",
			maxBytes, len(r.Findings), origFindings)
	}
	r.Uncertainties = append(r.Uncertainties, note())
	last := len(r.Uncertainties) - 1
	encode := func() []byte {
		r.Uncertainties[last] = note()
		return mustJSON(r)
	}
	for b = encode(); len(b) > maxBytes && len(r.Findings) > 0; b = encode() {
		r.Findings = r.Findings[:len(r.Findings)-1]
	}
	// Shorten the lists, never removing the cut note itself.
	for len(b) > maxBytes && (len(r.RecommendedNextSteps) > 0 || len(r.TestsToRun) > 0 || last > 0) {
		switch {
		case last > 0:
			r.Uncertainties = append(r.Uncertainties[:last-1], r.Uncertainties[last])
			last--
		case len(r.TestsToRun) > 0:
			r.TestsToRun = r.TestsToRun[:len(r.TestsToRun)-1]
		default:
			r.RecommendedNextSteps = r.RecommendedNextSteps[:len(r.RecommendedNextSteps)-1]
		}
		b = encode()
	}
	if len(b) > maxBytes {
		// Cut the summary by the excess (plus escaping slack) in one step, then refine.
		runes := []rune(r.Summary)
		for len(b) > maxBytes && len(runes) > 0 {
			cut := len(b) - maxBytes + 8
			if cut > len(runes) {
				cut = len(runes)
			}
			runes = runes[:len(runes)-cut]
			r.Summary = string(runes) + "…"
			b = encode()
		}
	}
	if len(b) > maxBytes && r.Error != nil {
		r.Error.Message = bound(r.Error.Message, 80)
		b = encode()
	}
	return b
}

func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Result holds only strings, ints and slices of them: this cannot fail.
		panic(fmt.Sprintf("delegate: encode result: %v", err))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}
