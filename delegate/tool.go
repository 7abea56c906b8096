package delegate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	_ "embed"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

//go:embed delegate.md
var descriptionTemplate string

// Name is the model-facing name of the tool.
const Name = "delegate"

// Defaults used when a Config field is zero.
const (
	DefaultTimeout        = 3 * time.Minute
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxResultBytes = 16 << 10
	minTimeout            = time.Second
	// cancelGrace is how long a cancelled or timed-out run may take to hand
	// back its messages before the result is built from what was streamed.
	cancelGrace = time.Second
	tickEvery   = time.Second
)

// Args are the delegate call's arguments; the tool's schema is generated
// from them.
type Args struct {
	Task           string `json:"task" jsonschema:"The bounded investigation to do, as a precise question or instruction."`
	Context        string `json:"context,omitempty" jsonschema:"Why you delegate and what you need back; anything the subagent should know beyond the conversation."`
	Scope          *Scope `json:"scope,omitempty"`
	Mode           string `json:"mode,omitempty" jsonschema:"Only read_only exists."`
	OutputContract string `json:"output_contract,omitempty" jsonschema:"Only findings exists: the delegate_result object."`
	TimeoutMS      int64  `json:"timeout_ms,omitempty" jsonschema:"Time limit in milliseconds; clamped to the configured maximum."`
}

var contract = tools.NewContract[Args](descriptionTemplate, nil,
	tools.Enum("mode", "read_only"), tools.Enum("output_contract", "findings"),
	tools.Minimum("timeout_ms", int(minTimeout/time.Millisecond)))

// Config is what the delegate tool needs from the composition root.
type Config struct {
	// Provider makes the subagent's model calls (the parent's provider).
	Provider agent.Provider
	// Parent is the conversation subagents fork from; nil: attached later
	// with SetParent.
	Parent Parent
	// DefaultTimeout applies without timeout_ms; MaxTimeout caps it.
	DefaultTimeout, MaxTimeout time.Duration
	// MaxResultBytes caps the delegate_result JSON the parent receives.
	MaxResultBytes int
	// MaxIterations bounds the subagent's model calls (0: agent.MaxIterations).
	MaxIterations int
	// NewID mints agent ids (nil: "subagent-" + 8 random hex digits).
	NewID func() string
}

// Tool is the delegate tool, declared with tools.Define. It runs one
// subagent at a time.
type Tool struct {
	*tools.Declared[Args]
	cfg    Config
	parent atomic.Pointer[parentRef]
	busy   atomic.Bool
	now    func() time.Time
}

var (
	_ tools.Tool          = (*Tool)(nil)
	_ tools.NestedRefuser = (*Tool)(nil)
	_ tools.Contracted    = (*Tool)(nil)
)

// NewTool makes the delegate tool, filling zero Config fields with defaults.
func NewTool(cfg Config) *Tool {
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.MaxTimeout < minTimeout {
		cfg.MaxTimeout = minTimeout
	}
	if cfg.DefaultTimeout > cfg.MaxTimeout {
		cfg.DefaultTimeout = cfg.MaxTimeout
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = agent.MaxIterations
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	t := &Tool{cfg: cfg, now: time.Now}
	t.Declared = tools.Define(tools.Def[Args]{
		Name: Name, Access: tools.Delegation, Contract: contract, ArgsCode: "invalid_arguments",
		Run: t.call, Summarize: summary, RefuseNested: refuseNested,
	})
	t.SetParent(cfg.Parent)
	return t
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "subagent-" + hex.EncodeToString(b[:])
}

// summary is the transcript line of a delegate call: the task, shortened.
func summary(a Args) string {
	if strings.TrimSpace(a.Task) == "" {
		return "subagent"
	}
	return sanitize(a.Task, 80)
}

// refuseNested answers a delegate call made by a subagent: a normal failed
// delegate_result carrying the caller's runner-given identity. Nothing is
// forked and no model request is made.
func refuseNested(inv tools.Invocation) tools.Result {
	// Only subagents reach this (the guard checks identity and depth), so the
	// role is subagent even if the invocation's identity says otherwise.
	id := inv.Identity
	id.Role = tools.RoleSubagent
	if id.ParentRole == "" {
		id.ParentRole = tools.RoleMain
	}
	return tools.Result{
		Content: string(mustJSON(NestedResult(id))),
		IsError: true,
		Summary: "nested delegation rejected",
	}
}

// call forks the parent's conversation, runs the subagent and returns its
// normalized delegate_result.
func (t *Tool) call(ctx context.Context, inv tools.Invocation, a Args) (tools.Result, error) {
	if inv.IsSubagent() {
		// The registry's guard answers first; this keeps a direct call safe.
		return refuseNested(inv), nil
	}
	if p := t.parentNow(); t.cfg.Provider == nil || p == nil || p.Registry() == nil {
		return t.result(failedResult(nil, CodeUnavailable, "Delegation is not available in this session.",
			"no provider or tool registry is configured for subagents")), nil
	}
	if !t.busy.CompareAndSwap(false, true) {
		return t.result(failedResult(nil, CodeBusy, "Another subagent is still running; only one runs at a time.",
			"a delegation is already in progress; wait for its result and continue without it or delegate again afterwards")), nil
	}
	started := false
	defer func() {
		if !started {
			t.busy.Store(false)
		}
	}()
	id := tools.Identity{Role: tools.RoleSubagent, AgentID: t.cfg.NewID(), ParentRole: tools.RoleMain}
	parent, ok := agent.ParentMessages(ctx)
	fork := BuildFork(parent, ok, id, Name, inv.CallID, a)
	started = true // from here the subagent's goroutine releases the flag
	return t.run(ctx, id, fork, t.timeout(a)), nil
}

// Validate implements tools.Validator: the task is trimmed and required,
// mode and output_contract name what exists.
func (a *Args) Validate() error {
	a.Task = strings.TrimSpace(a.Task)
	if a.Task == "" {
		return errors.New(`"task" is required and must not be empty`)
	}
	if a.Mode != "" && a.Mode != "read_only" {
		return fmt.Errorf(`"mode" must be "read_only" (write-capable delegation does not exist), got %q`, a.Mode)
	}
	if a.OutputContract != "" && a.OutputContract != "findings" {
		return fmt.Errorf(`"output_contract" must be "findings", got %q`, a.OutputContract)
	}
	if a.TimeoutMS < 0 {
		return errors.New(`"timeout_ms" must be positive`)
	}
	return nil
}

func (t *Tool) timeout(a Args) time.Duration {
	if a.TimeoutMS == 0 {
		return t.cfg.DefaultTimeout
	}
	d := time.Duration(a.TimeoutMS) * time.Millisecond
	if a.TimeoutMS > int64(t.cfg.MaxTimeout/time.Millisecond) {
		d = t.cfg.MaxTimeout
	}
	return max(d, minTimeout)
}

// result encodes r within the size limit as the parent's tool result.
func (t *Tool) result(r Result) tools.Result {
	res, _ := t.fit(r)
	return res
}

// fit encodes r within the size limit; it also returns the result as sent.
func (t *Tool) fit(r Result) (tools.Result, Result) {
	b := Fit(r, t.cfg.MaxResultBytes)
	var fitted Result
	_ = json.Unmarshal(b, &fitted)
	who := "subagent"
	if fitted.Identity != nil {
		who = fitted.Identity.AgentID
	}
	summary := fmt.Sprintf("%s %s", who, fitted.Status)
	switch {
	case fitted.Error != nil:
		summary += ": " + fitted.Error.Code
	default:
		summary += fmt.Sprintf(": %d finding(s)", len(fitted.Findings))
	}
	return tools.Result{Content: string(b), IsError: fitted.Status == StatusFailed, Summary: summary}, fitted
}

type outcome struct {
	msgs []agent.Message
	err  error
}

// run executes the subagent loop on the fork and builds its result. It
// returns promptly when ctx is cancelled; the busy flag is released only when
// the loop goroutine has really ended.
func (t *Tool) run(ctx context.Context, id tools.Identity, fork Fork, timeout time.Duration) tools.Result {
	parent := t.parentNow()
	reg := parent.Registry()
	mon := newMonitor(id.AgentID, t.now, parent.SubagentStatus, parent.AddSubagentUsage, Name)
	if fork.Bootstrap.ContextMode == ContextForked {
		mon.set(PhaseStarting, fmt.Sprintf("forked %d messages", fork.Bootstrap.ForkedMessageCount))
	} else {
		mon.set(PhaseStarting, "no parent messages to fork")
	}
	loop := &agent.Loop{
		Provider: t.cfg.Provider, Registry: reg, Model: parent.Model(), Reasoning: parent.Reasoning(),
		MaxIterations: t.cfg.MaxIterations,
		Invocation: tools.Invocation{
			Identity:        id,
			DelegationDepth: 1,
		},
		Observer: mon,
	}
	loop.AfterTool = parent.SubagentHook(fork.Messages)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	done := make(chan outcome, 1)
	go func() {
		defer t.busy.Store(false)
		defer func() {
			// A fault inside the subagent must not take the editor down with it.
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("the subagent failed with an internal error: %v", p)}
			}
		}()
		msgs, err := loop.Run(runCtx, fork.Messages)
		done <- outcome{msgs, err}
	}()
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()

	var out outcome
	finished := false
	for !finished {
		select {
		case out = <-done:
			finished = true
		case <-ticker.C:
			mon.tick()
		case <-runCtx.Done():
			select {
			case out = <-done:
			case <-time.After(cancelGrace):
				out = outcome{err: runCtx.Err()}
			}
			finished = true
		}
	}

	var r Result
	switch {
	case ctx.Err() != nil:
		r = failedResult(&id, CodeCancelled, "The delegation was cancelled; the subagent was stopped.",
			"the parent's turn was cancelled while the subagent was running")
		mon.finish(PhaseCancelled, "")
		return t.result(r)
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		r = t.cut(id, out.msgs, len(fork.Messages), mon, CodeTimeout,
			fmt.Sprintf("the subagent did not finish within %s", timeout))
	case errors.Is(out.err, agent.ErrMaxIterations):
		r = t.cut(id, out.msgs, len(fork.Messages), mon, CodeNoFinalAnswer,
			fmt.Sprintf("the subagent gave no final answer within %d model calls", t.cfg.MaxIterations))
	case out.err != nil:
		var pe *agent.ProviderError
		code := "subagent_error"
		if errors.As(out.err, &pe) {
			code = CodeProviderError
		}
		r = failedResult(&id, code, "The subagent failed before it could return a result.", out.err.Error())
	default:
		if final, ok := finalAnswer(out.msgs, len(fork.Messages)); ok {
			r = Normalize(id, final)
		} else {
			r = t.cut(id, out.msgs, len(fork.Messages), mon, CodeNoFinalAnswer,
				fmt.Sprintf("the subagent gave no final answer within %d model calls", t.cfg.MaxIterations))
		}
	}
	res, fitted := t.fit(r)
	mon.finish(fitted.Status, finalDetail(fitted))
	return res
}

// cut builds the result of a run that stopped before its final answer: what
// it had written so far becomes a partial result, otherwise it failed.
func (t *Tool) cut(id tools.Identity, msgs []agent.Message, forkLen int, mon *monitor, code, msg string) Result {
	text := ""
	if final, ok := finalAnswer(msgs, forkLen); ok {
		text = final
	} else if s := lastContent(msgs, forkLen); s != "" {
		text = s
	} else {
		text = mon.answer()
	}
	if strings.TrimSpace(text) == "" {
		return failedResult(&id, code, "The subagent stopped before it found anything to report.", msg)
	}
	r := Normalize(id, text)
	if r.Status != StatusFailed {
		r.Status = StatusPartial
	}
	r.Uncertainties = append(r.Uncertainties, "The subagent was stopped early ("+msg+"); this result is incomplete.")
	r.Error = &ResultError{Code: code, Message: msg}
	return r
}

// finalAnswer is the content of the subagent's answer: the last new message,
// if it is an assistant message without tool calls.
func finalAnswer(msgs []agent.Message, forkLen int) (string, bool) {
	if len(msgs) <= forkLen {
		return "", false
	}
	m := msgs[len(msgs)-1]
	if m.Role != agent.RoleAssistant || len(m.ToolCalls) > 0 {
		return "", false
	}
	return m.Content, true
}

// lastContent is the newest non-empty assistant content the subagent wrote.
func lastContent(msgs []agent.Message, forkLen int) string {
	for i := len(msgs) - 1; i >= forkLen && i >= 0; i-- {
		if msgs[i].Role == agent.RoleAssistant && strings.TrimSpace(msgs[i].Content) != "" {
			return msgs[i].Content
		}
	}
	return ""
}

func finalDetail(r Result) string {
	if r.Error != nil {
		return r.Error.Code
	}
	return fmt.Sprintf("%d finding(s)", len(r.Findings))
}
