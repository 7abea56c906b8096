package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Role names who is calling a tool. It is set by the runner, never by model text.
type Role string

const (
	RoleMain     Role = "main"
	RoleSubagent Role = "subagent"
)

// Identity is the caller's identity as minted by the runner.
type Identity struct {
	Role       Role   `json:"role"`
	AgentID    string `json:"agent_id"`
	ParentRole Role   `json:"parent_role,omitempty"`
}

// Invocation describes one tool call: who makes it and how deep in delegation
// it is. The registry's guard reads only this, so a model claiming another
// identity in its text changes nothing.
type Invocation struct {
	Identity        Identity
	DelegationDepth int
	CallID          string
	// Files is the conversation's record of what it saw of each file (nil:
	// no read-before-write guard, e.g. a subagent or a test).
	Files *FileTracker
	// Gate, when set, approves file changes before they are made (the
	// conversation's /edits review mode).
	Gate EditGate
	// Conversation and Turn tag the undo entries of the changes this call
	// makes (empty / 0 outside a conversation).
	Conversation string
	Turn         int
	// PlanMode is the main agent's read-only mode (/mode plan): mutating
	// tools are refused by the same guard that keeps subagents read-only.
	PlanMode bool
}

// IsSubagent reports whether the call comes from inside a delegated run.
func (inv Invocation) IsSubagent() bool {
	return inv.DelegationDepth > 0 || inv.Identity.Role == RoleSubagent
}

// Access classifies what a tool may do; the invocation guard uses it.
type Access int

const (
	// ReadOnly tools never change the workspace or talk to the user; subagents may call them.
	ReadOnly Access = iota
	// Mutating tools change files or run commands; subagents get permission_denied.
	Mutating
	// ParentOnly tools talk to the user or change session state (ask_user, update_plan).
	ParentOnly
	// Delegation is the delegate tool; inside a subagent it answers through NestedRefuser.
	Delegation
)

func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "read_only"
	case Mutating:
		return "mutating"
	case ParentOnly:
		return "parent_only"
	case Delegation:
		return "delegation"
	}
	return fmt.Sprintf("access(%d)", int(a))
}

// Tool is one model-facing tool. Name, Description and Parameters must return
// the same bytes for the life of the process: they form the cached prompt prefix.
type Tool interface {
	Name() string
	Description() string
	// Parameters is the JSON schema of the arguments object.
	Parameters() json.RawMessage
	Access() Access
	// Run executes the call. A failure the model should see and recover from is
	// a Result with IsError set; a returned error is a real fault and is turned
	// into an error result by the registry.
	Run(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error)
}

// Result is what a tool call produced.
type Result struct {
	// Content is exactly what the model receives as the tool message.
	Content string
	// IsError marks a failed call (the model still gets Content).
	IsError bool
	// Summary is one concise transcript line about the result, e.g. "14 matches in 5 files".
	Summary string
	// Changed lists absolute paths the call created, changed or removed, so the
	// editor can reload their buffers.
	Changed []string

	fault *fault // set by ErrorResult and CodedErrorResult
}

// CallSummarizer is implemented by tools that can describe a call in one short
// line for the transcript (e.g. `src/x.go 12–40`). Without it the registry
// shortens the raw arguments.
type CallSummarizer interface {
	SummarizeCall(args json.RawMessage) string
}

// ReadOnlyCapable is implemented by a Mutating tool that can run confined
// to read-only (bash_exec in a read-only OS sandbox: no writes but a temp
// dir, no network). While ReadOnlySandboxed reports true the guard admits
// it for subagents and plan mode, and the tool must then run every such
// call read-only (Invocation.IsSubagent, Invocation.PlanMode); where the
// confinement cannot be enforced it reports false and the guard refuses
// as for any mutating tool.
type ReadOnlyCapable interface {
	ReadOnlySandboxed() bool
}

// NestedRefuser is implemented by the Delegation tool: inside a subagent the
// guard returns its RefuseNested result instead of running it.
type NestedRefuser interface {
	RefuseNested(inv Invocation) Result
}

// Editor is what tools need from the editor that hosts them. Paths are absolute.
type Editor interface {
	// Modified reports whether a buffer for path has unsaved changes.
	Modified(ctx context.Context, path string) (bool, error)
	// Reload makes open buffers of these paths show what is on disk.
	Reload(ctx context.Context, paths []string)
}

// Refresher is implemented by editors that can re-check every open buffer
// against the disk; used after a shell command, which may change any file.
type Refresher interface {
	RefreshAll(ctx context.Context)
}

// ErrorResult is the standard failed result: {"error": "..."} for the model.
func ErrorResult(format string, args ...any) Result {
	return faultResult(&fault{msg: fmt.Sprintf(format, args...)})
}

// CodedErrorResult is a failed result with a stable machine-readable code:
// {"error": {"code": "...", "message": "..."}}.
func CodedErrorResult(code, format string, args ...any) Result {
	return faultResult(&fault{code: code, msg: fmt.Sprintf(format, args...)})
}

// fault is what ErrorResult or CodedErrorResult was given, kept so that
// Define can put the tool's name in front of the message.
type fault struct{ code, msg string }

func faultResult(f *fault) Result {
	return Result{Content: f.content(), IsError: true, Summary: f.summary(), fault: f}
}

func (f *fault) content() string {
	var b []byte
	if f.code == "" {
		b, _ = json.Marshal(map[string]string{"error": f.msg})
	} else {
		b, _ = json.Marshal(map[string]any{"error": map[string]string{"code": f.code, "message": f.msg}})
	}
	return string(b)
}

func (f *fault) summary() string {
	if f.code == "" {
		return f.msg
	}
	return f.code + ": " + f.msg
}

// named is r with "<name>: " in front of its error message, when r is an
// error result made by ErrorResult or CodedErrorResult whose content the
// tool left as it was, and whose message does not begin with the name
// already ("bash_exec: …", "bash_exec needs …"). A summary or changed
// paths the tool set stay.
func (r Result) named(name string) Result {
	f := r.fault
	if !r.IsError || f == nil || r.Content != f.content() || strings.HasPrefix(f.msg, name+": ") || strings.HasPrefix(f.msg, name+" ") {
		return r // not ours to change, or named already
	}
	out := faultResult(&fault{code: f.code, msg: name + ": " + f.msg})
	if r.Summary != f.summary() {
		out.Summary = r.Summary
	}
	out.Changed = r.Changed
	return out
}

// JSONResult marshals v as the model-facing content.
func JSONResult(v any, summary string) Result {
	b, err := json.Marshal(v)
	if err != nil {
		return ErrorResult("cannot encode result: %v", err)
	}
	return Result{Content: string(b), Summary: summary}
}
