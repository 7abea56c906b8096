package agent

import (
	"context"

	"github.com/fido-nvim/fido/tools"
)

// MaxIterations is the default bound of model calls in one turn.
const MaxIterations = 20

// Observer receives a loop's events, all on the loop's goroutine.
type Observer interface {
	// ModelCall is called before each request (iteration counts from 1).
	ModelCall(iteration int)
	// Delta is every streamed delta of the current request.
	Delta(d Delta)
	// ToolCall is called before a tool runs; summary is one concise line.
	ToolCall(call ToolCall, summary string)
	// ToolResult is called after it ran (also for refused or failed calls).
	ToolResult(call ToolCall, res tools.Result)
	// Usage is the usage of one completed request.
	Usage(u Usage)
}

// Loop runs one turn: model call, tool calls in order, model call again, until
// the model answers without tool calls or MaxIterations is reached.
type Loop struct {
	Provider      Provider
	Registry      *tools.Registry
	Model         string
	Reasoning     string
	MaxIterations int
	// Invocation is who runs the tools (main agent, or a subagent at depth 1).
	Invocation tools.Invocation
	Observer   Observer
}

type forkKey struct{}

// ParentMessages returns, during a tool call made by a Loop, a deep copy of
// the conversation at that instant: everything up to and including the
// assistant message that made the call, plus the results of calls before it.
func ParentMessages(ctx context.Context) ([]Message, bool) {
	f, ok := ctx.Value(forkKey{}).(func() []Message)
	if !ok {
		return nil, false
	}
	return f(), true
}
