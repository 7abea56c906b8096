package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

// Approval choices, in the order shown.
const (
	ApproveOnce      = "Run once"
	ApproveSession   = "Always this session"
	ApproveWorkspace = "Always for this tool in this workspace"
	ApproveDeny      = "Deny"
	ApproveDenyWhy   = "Deny with reason…"
)

// Result bounds: the first and last parts of a long result are kept.
const (
	resultHeadRunes = 16000
	resultTailRunes = 8000
	promptArgsRunes = 1500
)

// Tool is one server tool adapted to tools.Tool. Its name, description and
// parameters are fixed when the conversation's catalog is taken.
type Tool struct {
	m        *Manager
	srv      *server
	remote   string
	name     string
	desc     string
	params   json.RawMessage
	readOnly bool
}

var _ tools.Tool = (*Tool)(nil)
var _ tools.CallSummarizer = (*Tool)(nil)

func (t *Tool) Name() string                { return t.name }
func (t *Tool) Description() string         { return t.desc }
func (t *Tool) Parameters() json.RawMessage { return t.params }

// Server and Remote name the server and the tool's own name there.
func (t *Tool) Server() string { return t.srv.cfg.Name }
func (t *Tool) Remote() string { return t.remote }

// Access is ReadOnly only when the server declares readOnlyHint; the
// registry's guard then lets subagents through, and Run still requires an
// approval given beforehand (a subagent cannot ask).
func (t *Tool) Access() tools.Access {
	if t.readOnly {
		return tools.ReadOnly
	}
	return tools.Mutating
}

// SummarizeCall is the transcript line: server/tool and the arguments, short.
func (t *Tool) SummarizeCall(args json.RawMessage) string {
	a := text.Collapse(string(args))
	if a == "{}" || a == "" {
		return t.srv.cfg.Name + "/" + t.remote
	}
	return text.Shorten(t.srv.cfg.Name+"/"+t.remote+" "+a, 80)
}

// Run asks for approval (unless given), calls the server with the call
// timeout and turns its answer into a bounded result.
func (t *Tool) Run(ctx context.Context, inv tools.Invocation, args json.RawMessage) (tools.Result, error) {
	server := t.srv.cfg.Name
	if inv.IsSubagent() {
		if !t.readOnly || !t.m.approvals.allowed(server, t.remote) {
			return tools.CodedErrorResult("permission_denied",
				"%s is not available to a subagent: subagents may only call MCP tools the server marks read-only and the user has already approved; nothing was run", t.name), nil
		}
	} else if res, ok := t.approve(ctx, inv.CallID, args); !ok {
		return res, nil
	}
	var arguments map[string]any
	if err := json.Unmarshal(args, &arguments); err != nil {
		return tools.ErrorResult("arguments of %s must be a JSON object: %v", t.name, err), nil
	}
	timeout := t.m.cfg.Options.CallTimeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := t.srv.call(cctx, t.remote, arguments)
	if err != nil {
		var crash *crashError
		switch {
		case errors.As(err, &crash):
			return tools.CodedErrorResult("server_crashed", "%s; it is restarted at the next call (at most %d times a session)", crash.Error(), MaxRestarts), nil
		case ctx.Err() != nil:
			return tools.CodedErrorResult("cancelled", "%s was cancelled after %s; the server was told to stop the call", t.name, time.Since(start).Round(time.Millisecond)), nil
		case cctx.Err() != nil:
			return tools.CodedErrorResult("timeout", "%s did not answer within %s; the server was told to cancel the call. Try smaller inputs or another way", t.name, timeout), nil
		}
		return tools.ErrorResult("MCP server %s: %s", server, text.Collapse(err.Error())), nil
	}
	return FormatResult(res), nil
}

// approveChoices are the approval choices, least permissive first: a stray
// <CR> in a picker without a default selection denies.
var approveChoices = []string{ApproveDeny, ApproveDenyWhy, ApproveOnce, ApproveSession, ApproveWorkspace}

// approve asks the user through the prompter unless an approval covers the
// tool. Cancelling or dismissing counts as Deny.
func (t *Tool) approve(ctx context.Context, callID string, args json.RawMessage) (tools.Result, bool) {
	server := t.srv.cfg.Name
	if r := t.m.approvals.refusedBy(server, t.remote); r != nil {
		return declined("refused by rule: "+r.String(), fmt.Sprintf("the user's rule %q refuses this tool", r.String())), false
	}
	if t.m.approvals.allowed(server, t.remote) {
		return tools.Result{}, true
	}
	t.m.mu.Lock()
	p := t.m.prompter
	t.m.mu.Unlock()
	if p == nil {
		return declined("not approved (no way to ask)", "no approval prompt is available"), false
	}
	q := t.approvalQuestion(callID, args)
	idx, err := tools.AskQuestion(ctx, p, q, t.approvalPrompt(args))
	switch {
	case tools.Cancelled(ctx, err):
		return declined("cancelled while waiting for approval", "the call was cancelled before the user approved it"), false
	case err != nil:
		return declined("not approved (the question failed)", "the approval question could not be shown ("+err.Error()+")"), false
	case idx < 0 || idx >= len(q.Items):
		return declined("denied", "the user denied the call"), false
	}
	switch q.Items[idx] {
	case ApproveOnce:
		return tools.Result{}, true
	case ApproveSession:
		t.m.approvals.allowSession(server, t.remote)
		return tools.Result{}, true
	case ApproveWorkspace:
		if err := t.m.approvals.allowWorkspace(server, t.remote); err != nil {
			t.m.cfg.Notify("MCP approval could not be saved: "+err.Error(), true)
		}
		return tools.Result{}, true
	case ApproveDenyWhy:
		reason, ok, err := p.Input(ctx, "Why deny "+server+"/"+t.remote+"? (the model reads this)", "")
		if err == nil && ok && strings.TrimSpace(reason) != "" {
			return declined("denied: "+text.Shorten(strings.TrimSpace(reason), 60), "the user denied the call: "+strings.TrimSpace(reason)), false
		}
	}
	return declined("denied", "the user denied the call"), false
}

// approvalQuestion shows the call's arguments in full (indented JSON) beside
// a one-line prompt, as bash_exec shows its command.
func (t *Tool) approvalQuestion(callID string, args json.RawMessage) tools.Question {
	detail := string(args)
	var b bytes.Buffer
	if json.Indent(&b, args, "", "  ") == nil {
		detail = b.String()
	}
	return tools.Question{
		Prompt:         fmt.Sprintf("Run MCP tool %s/%s? (arguments shown above)", t.srv.cfg.Name, t.remote),
		Items:          approveChoices,
		Safe:           0,
		Approval:       true,
		Detail:         detail,
		DetailFiletype: "json",
		DetailInfo:     []string{"MCP server " + t.srv.cfg.Name + ", tool " + t.remote},
		CallID:         callID,
	}
}

// approvalPrompt is the question for prompters that cannot show a detail:
// the arguments on one line, cut for display (the whole call runs).
func (t *Tool) approvalPrompt(args json.RawMessage) string {
	shown := text.Collapse(string(args))
	if utf8.RuneCountInString(shown) > promptArgsRunes {
		shown = string([]rune(shown)[:promptArgsRunes]) + "… (arguments cut for display; the whole call runs)"
	}
	return fmt.Sprintf("MCP %s/%s wants to run with %s", t.srv.cfg.Name, t.remote, shown)
}

func declined(summary, why string) tools.Result {
	msg := why + "; nothing was run. Do not retry the same call: continue without it, or ask the user (ask_user) what to do instead."
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "declined", "message": msg}})
	return tools.Result{Content: string(b), IsError: true, Summary: summary}
}

// FormatResult turns a tool result into model-facing text: text joined,
// embedded text resources with their URI, binary content as a one-line note,
// bounded (first and last parts kept); isError becomes a tool error.
func FormatResult(res *sdk.CallToolResult) tools.Result {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, v.Text)
		case *sdk.EmbeddedResource:
			if v.Resource == nil {
				continue
			}
			if v.Resource.Text != "" || len(v.Resource.Blob) == 0 {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", v.Resource.URI, v.Resource.Text))
			} else {
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes of binary data not shown]", v.Resource.URI, orUnknown(v.Resource.MIMEType), len(v.Resource.Blob)))
			}
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", orUnknown(v.MIMEType), decodedLen(v.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", orUnknown(v.MIMEType), decodedLen(v.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s %s]", v.URI, v.Name))
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, fmt.Sprintf("[%T content: %s]", c, text.Shorten(string(b), 200)))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out := bound(strings.Join(parts, "\n"))
	if res.IsError {
		if out == "" {
			out = "the tool reported an error without a message"
		}
		r := tools.ErrorResult("%s", out)
		r.Summary = text.Shorten(text.FirstLine(out), 80)
		return r
	}
	summary := fmt.Sprintf("%d chars", utf8.RuneCountInString(out))
	if l := text.FirstLine(out); l != "" && utf8.RuneCountInString(out) <= 80 && !strings.Contains(out, "\n") {
		summary = l
	}
	return tools.Result{Content: out, Summary: summary}
}

// decodedLen is the size of the content (the SDK already decoded base64).
func decodedLen(b []byte) int { return len(b) }

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return s
}

// bound keeps the first and last parts of a long text, marking the cut.
func bound(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= resultHeadRunes+resultTailRunes {
		return s
	}
	r := []rune(s)
	omitted := n - resultHeadRunes - resultTailRunes
	return string(r[:resultHeadRunes]) +
		fmt.Sprintf("\n… [%d characters left out of a %d-character result] …\n", omitted, n) +
		string(r[n-resultTailRunes:])
}
