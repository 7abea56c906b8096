package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/fido-nvim/fido/tools"
)

// Request is one model call.
type Request struct {
	Model    string
	Messages []Message
	Tools    []tools.Spec
	// Reasoning is the effort: "" (model default), minimal, low, medium, high.
	Reasoning string
}

// DeltaKind says what a streamed delta carries.
type DeltaKind int

const (
	// DeltaReasoning carries reasoning text.
	DeltaReasoning DeltaKind = iota
	// DeltaContent carries answer text.
	DeltaContent
	// DeltaToolCall signals tool-call progress (Name set on the first fragment of a call).
	DeltaToolCall
	// DeltaStatus is a non-authoritative detail (e.g. "retrying in 2s after 429"); it never changes the turn state.
	DeltaStatus
)

// Delta is one streamed event of a model call.
type Delta struct {
	Kind      DeltaKind
	Text      string
	ToolIndex int
	ToolName  string
}

// Usage counts model calls, tokens and cost.
type Usage struct {
	Calls     int   `json:"calls"`
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	CacheRead int64 `json:"cache_read"`
	// CacheWrite counts prompt tokens written to the provider's cache
	// (explicit breakpoints, e.g. Anthropic through OpenRouter).
	CacheWrite int64   `json:"cache_write,omitempty"`
	Cost       float64 `json:"cost"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	return Usage{Calls: u.Calls + o.Calls, Input: u.Input + o.Input, Output: u.Output + o.Output,
		CacheRead: u.CacheRead + o.CacheRead, CacheWrite: u.CacheWrite + o.CacheWrite, Cost: u.Cost + o.Cost}
}

// Response is the result of a completed model call.
type Response struct {
	// Message is the assistant message (content, reasoning, complete tool calls).
	Message      Message
	FinishReason string
	// Usage of this call; Calls is 1.
	Usage        Usage
	GenerationID string
}

// Provider streams one model call. onDelta is called from the calling
// goroutine, in order. Stream honours ctx cancellation at once.
type Provider interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// ProviderError is a failed model call, worded for the user.
type ProviderError struct {
	// Status is the HTTP status, or 0 for a failure inside a 200 stream.
	Status int
	// Code is the provider's error code, if any (e.g. "server_error", "429").
	Code    string
	Message string
	// RetryAfter is the server's Retry-After, if it sent one.
	RetryAfter time.Duration
	// Retryable says a later identical request may succeed.
	Retryable bool
	// Partial reports that some of the response was already streamed.
	Partial bool
}

func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("provider error %d: %s", e.Status, e.Message)
	}
	return "provider error: " + e.Message
}
