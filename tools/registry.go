package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/fido-nvim/fido/tools/text"
)

// Spec is the advertised form of a tool: the bytes the provider sends.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Registry holds the tools in a stable order (sorted by name) with their
// specs computed once, so every request advertises byte-identical tools.
type Registry struct {
	tools  []Tool
	byName map[string]Tool
	specs  []Spec
	around map[string]runFunc // Intercept
}

// Interceptor runs around the calls of one tool, after the guard and the
// argument checks: it may look before and after run (which runs the tool)
// and extend the result, e.g. with the diagnostics an edit introduced.
type Interceptor func(ctx context.Context, inv Invocation, args json.RawMessage, run func(context.Context) (Result, error)) (Result, error)

// runFunc runs one call of a tool, interceptors included.
type runFunc func(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error)

// Intercept installs f around every call of the named tool. Call it while
// wiring, before the registry is used; a second call for a name wraps the first.
func (r *Registry) Intercept(name string, f Interceptor) error {
	t, ok := r.byName[name]
	if !ok {
		return fmt.Errorf("tools: cannot intercept unknown tool %q", name)
	}
	if r.around == nil {
		r.around = map[string]runFunc{}
	}
	inner := r.around[name]
	if inner == nil {
		inner = t.Run
	}
	r.around[name] = func(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error) {
		return f(ctx, inv, args, func(ctx context.Context) (Result, error) { return inner(ctx, inv, args) })
	}
	return nil
}

// NewRegistry sorts the tools by name and freezes their specs.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range ts {
		name := t.Name()
		if name == "" {
			return nil, errors.New("tools: a tool has an empty name")
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("tools: duplicate tool %q", name)
		}
		if ct, ok := t.(Contracted); ok {
			if err := ct.Contract().Err(); err != nil {
				return nil, fmt.Errorf("tools: %s: %w", name, err)
			}
		}
		params := t.Parameters()
		if !json.Valid(params) {
			return nil, fmt.Errorf("tools: %s: parameters are not valid JSON", name)
		}
		r.byName[name] = t
		r.tools = append(r.tools, t)
	}
	sort.SliceStable(r.tools, func(i, j int) bool { return r.tools[i].Name() < r.tools[j].Name() })
	for _, t := range r.tools {
		var compact bytes.Buffer
		_ = json.Compact(&compact, t.Parameters())
		r.specs = append(r.specs, Spec{Name: t.Name(), Description: t.Description(), Parameters: compact.Bytes()})
	}
	return r, nil
}

// With returns a registry that advertises r's tools first, unchanged (same
// order, same spec bytes, so the cached prefix they form stays valid), then
// extra sorted by name. Used for tools fixed per conversation (MCP servers).
func (r *Registry) With(extra ...Tool) (*Registry, error) {
	if len(extra) == 0 {
		return r, nil
	}
	x, err := NewRegistry(extra...)
	if err != nil {
		return nil, err
	}
	out := &Registry{byName: make(map[string]Tool, len(r.tools)+len(x.tools))}
	for _, t := range r.tools {
		out.byName[t.Name()] = t
	}
	for _, t := range x.tools {
		if _, dup := out.byName[t.Name()]; dup {
			return nil, fmt.Errorf("tools: duplicate tool %q", t.Name())
		}
		out.byName[t.Name()] = t
	}
	out.tools = append(append(out.tools, r.tools...), x.tools...)
	out.specs = append(append(out.specs, r.specs...), x.specs...)
	if len(r.around) > 0 { // the built-in tools keep their interceptors
		out.around = make(map[string]runFunc, len(r.around))
		for name, f := range r.around {
			out.around[name] = f
		}
	}
	return out, nil
}

// Tools returns the tools in advertised order. The slice must not be modified.
func (r *Registry) Tools() []Tool { return r.tools }

// Specs returns the frozen specs in advertised order. The slice must not be modified.
func (r *Registry) Specs() []Spec { return r.specs }

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Names lists the tool names in advertised order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.Name()
	}
	return out
}

// Invoke runs one call: guard first (identity and depth), then argument
// syntax, then the tool. It never panics and always returns a result the model
// can read, so every tool call in the history gets a tool message.
func (r *Registry) Invoke(ctx context.Context, inv Invocation, name string, args json.RawMessage) (res Result) {
	// Whatever a tool read (a command printing the environment, a file
	// holding the key), Fido's keys never reach the model or the transcript.
	defer func() {
		if redact := redactor.Load(); redact != nil {
			res.Content, res.Summary = (*redact)(res.Content), (*redact)(res.Summary)
		}
	}()
	t, ok := r.byName[name]
	if !ok {
		return ErrorResult("unknown tool %q; available tools: %s", name, strings.Join(r.Names(), ", "))
	}
	if res, denied := Guard(inv, t); denied {
		return res
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return ErrorResult("invalid JSON arguments for %s: %s", name, text.Shorten(string(args), 200))
	}
	if err := ctx.Err(); err != nil {
		return ErrorResult("%s was not run: %v", name, err)
	}
	defer func() {
		if p := recover(); p != nil {
			res = ErrorResult("%s failed with an internal error: %v", name, p)
			_, _ = fmt.Fprintf(panicLog, "tool %s panic: %v\n%s\n", name, p, debug.Stack())
		}
	}()
	run := t.Run
	if f := r.around[name]; f != nil {
		run = f
	}
	out, err := run(ctx, inv, args)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return ErrorResult("%s was cancelled", name)
		}
		return ErrorResult("%s failed: %v", name, err)
	}
	return out
}

// redactor removes secrets from every result Invoke returns (nil: none).
var redactor atomic.Pointer[func(string) string]

// SetRedactor makes every registry's Invoke pass each result's content and
// summary through redact: the composition root hands it the key redaction
// (tools/secret), which the contract itself does not know.
func SetRedactor(redact func(string) string) {
	if redact == nil {
		redactor.Store(nil)
		return
	}
	redactor.Store(&redact)
}

// panicLog receives stacks of recovered tool panics (stderr in the host, which goes to the log).
var panicLog io.Writer = io.Discard

// SetPanicLog sets where recovered tool panics are written.
func SetPanicLog(w io.Writer) { panicLog = w }

// PanicLog is where a tool writes the stack of a panic it recovered itself
// (what SetPanicLog set; nothing by default).
func PanicLog() io.Writer { return panicLog }

// Guard applies the delegation policy. It returns denied=true with the result
// to give the model when the call must not run.
func Guard(inv Invocation, t Tool) (Result, bool) {
	if confinable(t) {
		// It runs confined to read-only for subagents and plan mode.
		return Result{}, false
	}
	if inv.PlanMode && !inv.IsSubagent() && t.Access() == Mutating {
		return CodedErrorResult("permission_denied",
			"%s is not available in plan mode: the user asked you to only read, search, plan (update_plan), ask and delegate; nothing was changed. Propose the change instead; the user switches back with /mode default", t.Name()), true
	}
	if !inv.IsSubagent() {
		return Result{}, false
	}
	switch t.Access() {
	case ReadOnly:
		return Result{}, false
	case Delegation:
		if nr, ok := t.(NestedRefuser); ok {
			return nr.RefuseNested(inv), true
		}
	}
	return deniedToSubagent(t.Name()), true
}

// deniedToSubagent is the guard's answer to a subagent calling a tool that
// is not read-only.
func deniedToSubagent(name string) Result {
	return CodedErrorResult("permission_denied",
		"%s is not available to a subagent: subagents are read-only and may only use read-only tools; nothing was changed", name)
}

// confinable reports a Mutating tool that runs read-only for subagents and
// plan mode (ReadOnlyCapable) and can do so now.
func confinable(t Tool) bool {
	rc, ok := t.(ReadOnlyCapable)
	return ok && t.Access() == Mutating && rc.ReadOnlySandboxed()
}

// DecodeArgs decodes a JSON arguments object strictly (unknown fields are
// errors) and words failures for the model.
func DecodeArgs(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return fmt.Errorf("argument %q must be %s, got %s", te.Field, jsonKind(te.Type), te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return fmt.Errorf("unknown argument %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			return fmt.Errorf("arguments are not a valid JSON object: %v", err)
		}
	}
	return nil
}

// jsonKind names a Go type the way the JSON schema does.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// SummarizeCall gives the one-line transcript description of a call.
func (r *Registry) SummarizeCall(name string, args json.RawMessage) string {
	if t, ok := r.byName[name]; ok {
		if cs, ok := t.(CallSummarizer); ok {
			return cs.SummarizeCall(args)
		}
	}
	return rawCallSummary(args)
}

// rawCallSummary is the transcript line of a call whose tool cannot
// describe it: the arguments on one line, shortened.
func rawCallSummary(args json.RawMessage) string {
	return text.Shorten(text.Collapse(string(args)), 80)
}
