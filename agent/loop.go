package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fido-nvim/fido/tools"
)

// MaxIterations is the default bound of model calls in one turn.
const MaxIterations = 20

// ErrMaxIterations ends a turn that kept calling tools.
var ErrMaxIterations = errors.New("the turn stopped after the maximum number of model calls")

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
	// AfterTool, when set, may add to a tool's result before the model sees
	// it (nested AGENTS.md instructions).
	AfterTool func(call ToolCall, res tools.Result) tools.Result
	// Recorder, when set, is told of every complete message the turn adds,
	// in order, and of each tool call before it starts (the conversation
	// log saves them as they happen).
	Recorder Recorder
}

// Recorder receives a turn's complete messages as they are added.
type Recorder interface {
	// Message is an assistant message or a tool result; res is the tool's
	// result for a tool message (nil otherwise).
	Message(m Message, res *tools.Result)
	// ToolStarted is called right before a tool runs.
	ToolStarted(call ToolCall)
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

// Run sends msgs and iterates until the model answers without tool calls. It
// returns the whole conversation (msgs plus what the turn added). Whatever
// happens, every assistant tool call in the returned messages has a tool
// result, so the next request is always valid. msgs itself is not modified.
func (l *Loop) Run(ctx context.Context, msgs []Message) ([]Message, error) {
	obs := l.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	limit := l.MaxIterations
	if limit <= 0 {
		limit = MaxIterations
	}
	conv := append([]Message(nil), msgs...)
	seen := toolCallIDs(conv)
	var specs []tools.Spec
	if l.Registry != nil {
		specs = l.Registry.Specs()
	}
	for iter := 1; iter <= limit; iter++ {
		if err := ctx.Err(); err != nil {
			return conv, err
		}
		obs.ModelCall(iter)
		resp, err := l.Provider.Stream(ctx, Request{
			Model: l.Model, Messages: conv, Tools: specs, Reasoning: l.Reasoning,
		}, obs.Delta)
		if err != nil {
			if ctx.Err() != nil {
				return conv, ctx.Err()
			}
			return conv, err
		}
		obs.Usage(resp.Usage)
		am := resp.Message.Clone()
		am.Role = RoleAssistant
		calls := append([]ToolCall(nil), am.ToolCalls...)
		for i := range am.ToolCalls {
			// Strict providers reject a history with an empty or repeated
			// call id, so every id is made unique within the conversation;
			// the result below answers the call under its new id.
			if id := am.ToolCalls[i].ID; id == "" || seen[id] {
				am.ToolCalls[i].ID = uniqueCallID(seen)
				calls[i].ID = am.ToolCalls[i].ID
			}
			seen[am.ToolCalls[i].ID] = true
			// Providers may reject a history whose arguments are not JSON; the
			// tool result still quotes what the model sent.
			if !json.Valid([]byte(am.ToolCalls[i].Arguments)) {
				am.ToolCalls[i].Arguments = "{}"
			}
		}
		conv = append(conv, am)
		l.record(am, nil)
		if len(calls) == 0 {
			return conv, nil
		}
		for _, call := range calls {
			if ctx.Err() != nil {
				res := tools.Result{Content: `{"error":"not run: the turn was cancelled"}`, Summary: "not run", IsError: true}
				m := ToolMessage(call, res.Content)
				conv = append(conv, m)
				l.record(m, &res)
				continue
			}
			if l.Recorder != nil {
				l.Recorder.ToolStarted(call)
			}
			m, res := l.runTool(ctx, obs, conv, call)
			conv = append(conv, m)
			l.record(m, &res)
		}
		if err := ctx.Err(); err != nil {
			return conv, err
		}
	}
	return conv, fmt.Errorf("%w (%d)", ErrMaxIterations, limit)
}

// cancelledToolResult answers a call whose tool was still running when the
// turn was cancelled; whatever the tool returns later is dropped.
const cancelledToolResult = `{"error":"cancelled: the turn was cancelled while this tool was running; its result was dropped and its effects, if any, are unknown: check before relying on them"}`

// cancelGrace is how long a cancelled turn waits for a running tool's own
// result before answering its call with cancelledToolResult.
const cancelGrace = 300 * time.Millisecond

// runTool runs one call. The tool runs on its own goroutine so that a
// cancelled turn ends at once even when a tool is stuck (e.g. in a system
// call that ignores its context): the call is then answered with
// cancelledToolResult and the tool's late result is dropped.
func (l *Loop) record(m Message, res *tools.Result) {
	if l.Recorder != nil {
		l.Recorder.Message(m, res)
	}
}

func (l *Loop) runTool(ctx context.Context, obs Observer, conv []Message, call ToolCall) (Message, tools.Result) {
	args := json.RawMessage(call.Arguments)
	summary := call.Name
	if l.Registry != nil {
		summary = l.Registry.SummarizeCall(call.Name, args)
	}
	obs.ToolCall(call, summary)
	inv := l.Invocation
	inv.CallID = call.ID
	// conv is this call's view of the conversation; the loop only appends
	// after it, so an abandoned tool reading it never races with the loop.
	tctx := context.WithValue(ctx, forkKey{}, func() []Message { return CloneMessages(conv) })
	done := make(chan tools.Result, 1)
	go func() {
		if l.Registry == nil {
			done <- tools.ErrorResult("unknown tool %q: no tools are available", call.Name)
			return
		}
		done <- l.Registry.Invoke(tctx, inv, call.Name, args)
	}()
	var res tools.Result
	select {
	case res = <-done:
	case <-ctx.Done():
		// A tool that honours its context answers within the grace period
		// with its own words (e.g. the delegate's cancelled result).
		grace := time.NewTimer(cancelGrace)
		select {
		case res = <-done:
		case <-grace.C:
			res = tools.Result{Content: cancelledToolResult, Summary: "cancelled", IsError: true}
		}
		grace.Stop()
	}
	if l.AfterTool != nil && !res.IsError {
		res = l.AfterTool(call, res)
	}
	obs.ToolResult(call, res)
	return ToolMessage(call, res.Content), res
}

// toolCallIDs is the set of tool-call ids the assistant messages of msgs use.
func toolCallIDs(msgs []Message) map[string]bool {
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			seen[c.ID] = true
		}
	}
	return seen
}

// uniqueCallID mints a call id not in seen.
func uniqueCallID(seen map[string]bool) string {
	for {
		if id := "call_" + randomHex(8); !seen[id] {
			return id
		}
	}
}

// ToolMessage is the tool-role answer to call.
func ToolMessage(call ToolCall, content string) Message {
	return Message{Role: RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type nopObserver struct{}

func (nopObserver) ModelCall(int)                     {}
func (nopObserver) Delta(Delta)                       {}
func (nopObserver) ToolCall(ToolCall, string)         {}
func (nopObserver) ToolResult(ToolCall, tools.Result) {}
func (nopObserver) Usage(Usage)                       {}

// DescribeError words a turn failure in one line for the transcript.
func DescribeError(err error) string {
	var pe *ProviderError
	switch {
	case errors.As(err, &pe):
		return pe.Message
	case errors.Is(err, ErrMaxIterations):
		return "stopped: the model kept calling tools for " + strings.TrimPrefix(err.Error(), ErrMaxIterations.Error()+" ") +
			" model calls in one turn; send a message to let it continue"
	case errors.Is(err, context.DeadlineExceeded):
		return "the model request timed out"
	}
	return err.Error()
}
