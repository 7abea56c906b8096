package js

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed jsexec.md
var jsExecTemplate string

const (
	jsDefaultTimeout = 5000 * time.Millisecond
	jsMaxTimeout     = 60000 * time.Millisecond
	jsMaxCode        = 256 << 10 // bytes of snippet source
	jsMaxResult      = 64 << 10  // bytes of result JSON
	jsMaxConsole     = 64 << 10  // bytes of console text per call
	jsMaxLine        = 8 << 10   // bytes of one console line
	jsMaxStackLines  = 20        // lines of an error's stack
	jsMaxModule      = 1 << 20   // bytes of one required file
	jsMaxModules     = 16 << 20  // bytes of all required files in one call
	jsMaxCallStack   = 4000      // JS call depth before RangeError
	jsMaxFetches     = 50        // fetch calls per run
	jsMaxFetchBody   = 5 << 20   // bytes of one fetch response body
	jsMaxFetchSend   = 1 << 20   // bytes of one fetch request body
	// jsKillGrace is how long a runtime has to stop after Interrupt before
	// its goroutine is abandoned (Interrupt cannot stop native code such as a
	// regexp backtrack or a huge String.prototype.repeat).
	jsKillGrace = 300 * time.Millisecond
	// jsRegexTimeout bounds one regexp match. It is process-wide
	// (regexp2.DefaultMatchTimeout is read when a pattern is compiled), so the
	// worker process sets it before it compiles any (RunWorker), and an
	// abandoned runtime stops burning CPU at most this long after a timeout.
	jsRegexTimeout = time.Second
	// jsMemoryLimit stops a run whose heap growth exceeds it: goja has no
	// allocation limit and an out-of-memory crash would take the host down.
	jsMemoryLimit = 1 << 30
	jsMemoryPoll  = 25 * time.Millisecond
)

// Network approval choices offered through the Prompter.
const (
	jsChoiceAllow   = "Allow network"
	jsChoiceOffline = "Run offline"
)

// JSTool runs JavaScript snippets in a fresh goja runtime per call, each in
// its own worker process (see worker.go). It is javascript_execute, declared
// with tools.Define, plus the spare worker it keeps warm.
type JSTool struct {
	*tools.Declared[jsExecParams]
	ws       *workspace.Workspace
	prompter tools.Prompter
	rules    *permission.Store // JSNetworkRule decides network access without asking
	memLimit uint64
	worker   jsWorkerSpec

	spareMu sync.Mutex
	spare   *jsSpare // started in advance, waiting for the next call
	closed  bool
}

// NewJSTool returns the javascript_execute tool. require resolves against
// ws; p asks the user before a snippet gets network access (nil: never).
func NewJSTool(ws *workspace.Workspace, p tools.Prompter) *JSTool {
	t := &JSTool{ws: ws, prompter: p, memLimit: jsMemoryLimit}
	t.Declared = tools.Define(tools.Def[jsExecParams]{
		Name: "javascript_execute", Access: tools.Mutating, Contract: jsExecContract,
		Run: t.run, Summarize: jsExecParams.summary,
	})
	return t
}

// WithPermissions lets the command rules decide network access
// (JSNetworkRule) before the user is asked: one mechanism for every approval.
func (t *JSTool) WithPermissions(p *permission.Store) *JSTool {
	t.rules = p
	return t
}

// SetWorker sets the program that runs snippets and its arguments. The
// default is this executable with the js-worker subcommand, which is right
// for bin/fido; other programs embedding the tool (benchmarks) point it at
// bin/fido.
func (t *JSTool) SetWorker(path string, args ...string) {
	t.worker = jsWorkerSpec{path: path, args: args}
}

type jsExecParams struct {
	Code         string `json:"code" jsonschema:"JavaScript source. The result is module.exports when the snippet sets it, else the value of the last expression statement; a Promise is awaited."`
	Timeout      *int   `json:"timeout,omitempty" jsonschema:"Wall-clock limit in milliseconds. Default {{.DefaultTimeoutMS}}."`
	AllowNetwork bool   `json:"allow_network,omitempty" jsonschema:"Ask the user to allow fetch() for this run. Default false. If the user declines, the snippet runs offline."`
}

var jsExecContract = tools.NewContract[jsExecParams](jsExecTemplate, tools.Vars{
	"DefaultTimeoutMS": int(jsDefaultTimeout / time.Millisecond), "MaxTimeoutMS": int(jsMaxTimeout / time.Millisecond),
	"MaxCode": jsMaxCode, "MaxResult": jsMaxResult, "MaxConsole": jsMaxConsole, "MaxLine": jsMaxLine, "MaxModule": jsMaxModule,
	"KillGrace": jsKillGrace, "RegexTimeout": jsRegexTimeout, "MemoryLimit": jsMemoryLimit,
	"MaxFetchBody": jsMaxFetchBody, "MaxFetches": jsMaxFetches,
}, tools.Minimum("timeout", 1), tools.Maximum("timeout", int(jsMaxTimeout/time.Millisecond)))

// Validate implements tools.Validator.
func (p *jsExecParams) Validate() error {
	switch {
	case strings.TrimSpace(p.Code) == "":
		return errors.New("code is required")
	case len(p.Code) > jsMaxCode:
		return fmt.Errorf("code is %d bytes; at most %d bytes are accepted (require a workspace file for larger programs)", len(p.Code), jsMaxCode)
	case p.Timeout != nil && *p.Timeout < 1:
		return fmt.Errorf("timeout must be at least 1 ms, got %d", *p.Timeout)
	}
	return nil
}

// timeout is the run's wall-clock limit: the default, or the one asked
// for up to the maximum.
func (p jsExecParams) timeout() time.Duration {
	if p.Timeout == nil {
		return jsDefaultTimeout
	}
	return min(time.Duration(*p.Timeout)*time.Millisecond, jsMaxTimeout)
}

func (p jsExecParams) summary() string {
	first := strings.TrimSpace(p.Code)
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = strings.TrimSpace(first[:i]) + " …"
	}
	s := text.Shorten(first, 60)
	if p.AllowNetwork {
		s += " (network)"
	}
	return s
}

// jsConsoleLine is one captured console call.
type jsConsoleLine struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

// jsError describes an exception or a stop.
type jsError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Stack   string `json:"stack,omitempty"`
}

// jsOutput is the model-facing content of a call.
type jsOutput struct {
	// Result is the JSON of the value, or null.
	Result json.RawMessage `json:"result"`
	// ResultString is set when Result could not hold the value: String(value)
	// for a non-JSON value, or the start of an over-long JSON text.
	ResultString   *string         `json:"result_string,omitempty"`
	ResultNote     string          `json:"result_note,omitempty"`
	Console        []jsConsoleLine `json:"console"`
	ConsoleDropped int             `json:"console_dropped,omitempty"`
	Error          *jsError        `json:"error,omitempty"`
	TimedOut       bool            `json:"timed_out,omitempty"`
	Network        string          `json:"network"`
	NetworkNote    string          `json:"network_note,omitempty"`
}

// jsStop says why the watchdog stopped a run.
type jsStop int

const (
	jsStopTimeout jsStop = iota + 1
	jsStopCancel
	jsStopMemory
)

func (s jsStop) String() string {
	switch s {
	case jsStopTimeout:
		return "timeout"
	case jsStopCancel:
		return "cancelled"
	case jsStopMemory:
		return "memory limit"
	}
	return "stop"
}

func (t *JSTool) run(ctx context.Context, inv tools.Invocation, p jsExecParams) (tools.Result, error) {
	timeout := p.timeout()

	out := jsOutput{Network: "offline"}
	network := false
	offlineWhy := "allow_network was not set"
	if p.AllowNetwork {
		var err error
		network, out.NetworkNote, err = t.approveNetwork(ctx, inv.CallID, p.Code)
		if err != nil {
			return tools.Result{}, err
		}
		offlineWhy = out.NetworkNote
		if network {
			out.Network = "allowed"
		}
	}

	res, elapsed, err := t.runWorker(ctx, p.Code, timeout, network, offlineWhy)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.ErrorResult("%v", err), nil
	}
	res.Network, res.NetworkNote = out.Network, out.NetworkNote
	out = res
	if out.Result == nil {
		out.Result = json.RawMessage("null")
	}
	if out.Console == nil {
		out.Console = []jsConsoleLine{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // code and markup read better without \u003c
	if err := enc.Encode(out); err != nil {
		return tools.ErrorResult("cannot encode the result: %v", err), nil
	}
	return tools.Result{Content: strings.TrimSuffix(buf.String(), "\n"), Summary: jsSummary(out, elapsed), IsError: out.Error != nil}, nil
}

// approveNetwork asks the user whether this run may use fetch. Declining,
// dismissing or having nobody to ask means offline, with a note saying why.
func (t *JSTool) approveNetwork(ctx context.Context, callID, code string) (bool, string, error) {
	if t.rules != nil {
		switch d := t.rules.DecideAction(permission.JSNetworkRule); d.Verdict {
		case permission.Run:
			return true, "", nil
		case permission.Refuse:
			return false, fmt.Sprintf("the user's rule %q refuses network access; ran offline", d.Rule.String()), nil
		}
	}
	if t.prompter == nil {
		return false, "network access needs the user's approval and there is no user to ask; ran offline", nil
	}
	preview := text.Collapse(code)
	prompt := fmt.Sprintf("javascript_execute asks for network access (fetch; it can also reach localhost and internal services): %s", text.Shorten(preview, 80))
	q := tools.Question{
		Prompt:         "Allow this script network access, localhost included? (code shown above)",
		Items:          []string{jsChoiceAllow, jsChoiceOffline},
		Safe:           1,
		Approval:       true,
		Detail:         strings.TrimRight(code, "\n"),
		DetailFiletype: "javascript",
		DetailInfo:     []string{"javascript_execute with network access"},
		CallID:         callID,
	}
	i, err := tools.AskQuestion(ctx, t.prompter, q, prompt)
	if err != nil {
		if tools.Cancelled(ctx, err) {
			return false, "", context.Canceled
		}
		return false, fmt.Sprintf("the approval prompt failed (%v); ran offline", err), nil
	}
	if i == 0 {
		return true, "", nil
	}
	return false, "the user declined network access; ran offline", nil
}

// jsSummary is the transcript line: "ok · 3 log lines · 12ms", the error, or the stop.
func jsSummary(out jsOutput, elapsed time.Duration) string {
	if out.TimedOut {
		return text.Shorten(out.Error.Message, 60)
	}
	if out.Error != nil {
		return text.Shorten(out.Error.Name+": "+text.FirstLine(out.Error.Message), 100)
	}
	parts := []string{"ok"}
	if n := len(out.Console) + out.ConsoleDropped; n > 0 {
		parts = append(parts, text.Count(n, "log line", "log lines"))
	}
	if out.Network == "allowed" {
		parts = append(parts, "network")
	}
	parts = append(parts, text.Duration(elapsed))
	return strings.Join(parts, " · ")
}
