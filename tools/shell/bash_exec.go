package shell

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/secret"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed bash_exec.md
var bashExecTemplate string

const (
	bashDefaultTimeout = 120
	bashMaxTimeout     = 600
	bashHeadBytes      = 16 << 10 // output kept from the start
	bashTailBytes      = 16 << 10 // output kept from the end
	bashKillGrace      = 2 * time.Second
	bashDrainWait      = time.Second
	bashPromptMaxRunes = 2000
	bashPromptMaxLines = 40
)

// The approval choices. The editor lists the least permissive (Deny) first;
// the "Always" ones carry the command prefix the rule would hold.
const (
	BashRunOnce         = "Run once"
	BashRunOnceWith     = "Run once with "
	BashDeny            = "Deny"
	BashDenyWithReason  = "Deny with reason…"
	BashAlwaysSession   = "Always this session: "
	BashAlwaysWorkspace = "Always in this workspace: "
)

// bashQuietEnv makes common tools behave non-interactively: no pagers, no
// colours, no credential prompts, no editor waiting for a terminal.
var bashQuietEnv = []string{
	"TERM=dumb",
	"NO_COLOR=1",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_EDITOR=true",
	"DEBIAN_FRONTEND=noninteractive",
}

// BashTool runs a shell command in the workspace root after the user approved
// it, or without asking when every command in it matches an allow rule
// (tools/permission: parsed with a real shell parser). A deny rule refuses
// at once. "Always …" choices add a rule for the session or the workspace:
// a command prefix when that alone lets the command run, else a rule for
// exactly this command line; there is no blanket "allow everything".
type BashTool struct {
	*tools.Declared[bashParams]
	box    *commandBox // the OS sandbox (sandboxed.go); nil: none
	ws     *workspace.Workspace
	p      tools.Prompter
	asking chan struct{} // holds one token: one approval prompt at a time
	rules  *permission.Store
	// killGrace is the time between SIGTERM and SIGKILL when stopping the
	// command's process group.
	killGrace time.Duration
}

// NewBashTool returns bash_exec for ws; p asks the user for approval (nil: every call is refused).
func NewBashTool(ws *workspace.Workspace, p tools.Prompter) *BashTool {
	t := &BashTool{ws: ws, p: p, asking: make(chan struct{}, 1), killGrace: bashKillGrace}
	t.Declared = tools.Define(tools.Def[bashParams]{
		Name: "bash_exec", Access: tools.Mutating, Contract: bashContract, Run: t.run,
		Summarize: func(p bashParams) string { return text.Headline(p.Command, 80) },
	})
	t.asking <- struct{}{}
	t.rules, _ = permission.OpenStore("", nil)
	return t
}

// WithPermissions makes the tool decide with rules (config, workspace and
// session rules); without it rules live only as long as the tool.
func (t *BashTool) WithPermissions(p *permission.Store) *BashTool {
	t.rules = p
	return t
}

type bashParams struct {
	Command string `json:"command" jsonschema:"Script for bash -c, run in the workspace root after the user approves it."`
	Timeout *int   `json:"timeout,omitempty" jsonschema:"Seconds before the command and all its child processes are killed. Default {{.DefaultTimeout}}."`
}

var bashContract = tools.NewContract[bashParams](bashExecTemplate, tools.Vars{
	"DefaultTimeout": bashDefaultTimeout, "MaxTimeout": bashMaxTimeout, "HeadBytes": bashHeadBytes, "TailBytes": bashTailBytes, "KeptBytes": bashHeadBytes + bashTailBytes,
}, tools.Minimum("timeout", 1), tools.Maximum("timeout", bashMaxTimeout))

func (t *BashTool) run(ctx context.Context, inv tools.Invocation, p bashParams) (tools.Result, error) {
	// The registry's guard already refuses subagents; this keeps a direct call just as safe.
	if res, denied := tools.Guard(inv, t); denied {
		return res, nil
	}
	if strings.TrimSpace(p.Command) == "" {
		return tools.ErrorResult("command is required"), nil
	}
	timeout, note := bashDefaultTimeout, ""
	if p.Timeout != nil {
		switch {
		case *p.Timeout < 1:
			return tools.ErrorResult("timeout must be at least 1 second, got %d", *p.Timeout), nil
		case *p.Timeout > bashMaxTimeout:
			timeout, note = bashMaxTimeout, fmt.Sprintf(" (the requested %ds is above the maximum)", *p.Timeout)
		default:
			timeout = *p.Timeout
		}
	}
	if t.p == nil {
		return tools.ErrorResult("bash_exec needs an editor to ask for approval; nothing was run"), nil
	}
	res := t.runCommand(ctx, inv, p.Command, timeout, note)
	// The command may have changed any file: let the editor re-check its buffers.
	if r, ok := t.ws.Editor.(tools.Refresher); ok {
		r.RefreshAll(ctx)
	}
	return res, nil
}

// approve decides with the rules and asks the user when they do not
// decide; plan (nil without a sandbox) adds the sandbox to the question
// and the widening the rules or the user approved. ok is false with the
// result to return when nothing may run.
func (t *BashTool) approve(ctx context.Context, callID, command string, timeout int, plan *runPlan) (approval, tools.Result, bool) {
	d := t.rules.Checker(t.ws.Root).Decide(command)
	plan.decided(t.ws.Root, d)
	switch {
	case d.Verdict == permission.Refuse:
		return approval{}, bashRefusedByRule(*d.Rule), false
	case d.Verdict == permission.Run:
		return approval{widen: plan.ruled()}, tools.Result{}, true
	case plan.unasked(d):
		return approval{auto: true}, tools.Result{}, true
	}
	select {
	case <-t.asking:
		defer func() { t.asking <- struct{}{} }()
	case <-ctx.Done():
		return approval{}, bashDeclined("cancelled while waiting for approval", "the call was cancelled before the user approved it"), false
	}
	// A rule added while this call waited may decide it now.
	d = t.rules.Checker(t.ws.Root).Decide(command)
	plan.decided(t.ws.Root, d)
	switch {
	case d.Verdict == permission.Refuse:
		return approval{}, bashRefusedByRule(*d.Rule), false
	case d.Verdict == permission.Run:
		return approval{widen: plan.ruled()}, tools.Result{}, true
	case plan.unasked(d):
		return approval{auto: true}, tools.Result{}, true
	}
	offered := plan.offered()
	always := bashAlwaysLabel(d.Propose)
	if always != "" && !offered.IsZero() {
		always += " (with " + offered.Phrase() + ")"
	}
	q := bashQuestion(t.ws.Root, callID, command, timeout, always)
	if info := plan.info(); len(info) > 0 {
		q.Sandbox = info[0] // how confined it runs, beside the directory and timeout
	}
	if !offered.IsZero() {
		q.Items = insertAfter(q.Items, BashRunOnce, BashRunOnceWith+offered.Phrase())
	}
	idx, err := tools.AskQuestion(ctx, t.p, q, bashPrompt(t.ws.Root, command)+plan.promptNote())
	if tools.Cancelled(ctx, err) {
		return approval{}, bashDeclined("cancelled while waiting for approval", "the call was cancelled before the user approved it"), false
	}
	if err != nil {
		return approval{}, tools.ErrorResult("bash_exec: could not ask the user for approval: %v; nothing was run", err), false
	}
	if idx < 0 || idx >= len(q.Items) {
		return approval{}, bashDeclined("not approved (prompt dismissed)", "the user dismissed the approval prompt without approving"), false
	}
	switch choice := q.Items[idx]; {
	case choice == BashRunOnce:
		return approval{widen: plan.ruled()}, tools.Result{}, true
	case strings.HasPrefix(choice, BashRunOnceWith):
		return approval{widen: plan.ruled().Union(offered)}, tools.Result{}, true
	case choice == BashDeny:
		return approval{}, bashDeclined("denied by the user", "the user denied running this command"), false
	case choice == BashDenyWithReason:
		reason, ok, _ := t.p.Input(ctx, "Why not? (the model reads this) ", "")
		if !ok || strings.TrimSpace(reason) == "" {
			return approval{}, bashDeclined("denied by the user", "the user denied running this command"), false
		}
		return approval{}, bashDeclined("denied: "+text.ShortenTo(reason, 60), "the user denied running this command, saying: "+strings.TrimSpace(reason)), false
	case strings.HasPrefix(choice, BashAlwaysSession), strings.HasPrefix(choice, BashAlwaysWorkspace):
		origin := permission.OriginSession
		if strings.HasPrefix(choice, BashAlwaysWorkspace) {
			origin = permission.OriginWorkspace
		}
		rule := d.Propose
		if !rule.Script {
			// A prefix rule: the user may widen or narrow it first.
			prefix, ok, _ := t.p.Input(ctx, "Allow commands that start with: ", rule.Command)
			rule = permission.Rule{Effect: permission.Allow, Command: strings.Join(strings.Fields(prefix), " ")}
			if !ok {
				rule.Command = ""
			}
		}
		rule.Widening = offered
		if rule.Command != "" {
			if err := t.rules.Add(rule, origin); err != nil {
				return approval{}, tools.ErrorResult("bash_exec: the rule could not be saved (%v); nothing was run", err), false
			}
		}
		// The user approved this command either way.
		return approval{widen: plan.ruled().Union(offered)}, tools.Result{}, true
	}
	return approval{}, bashDeclined("not approved (prompt dismissed)", "the user dismissed the approval prompt without approving"), false
}

// bashRefusedByRule is the result of a command a deny rule matched.
func bashRefusedByRule(r permission.Rule) tools.Result {
	msg := fmt.Sprintf("refused by the user's rule %q (%s); nothing was run. Do not retry it in another form: continue without it, or ask the user (ask_user).", r.String(), r.Origin)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "denied_by_rule", "message": msg}})
	return tools.Result{Content: string(b), IsError: true, Summary: "refused by rule: " + r.String()}
}

func bashDeclined(summary, why string) tools.Result {
	msg := why + "; nothing was run. Do not retry the same command: continue without it, or ask the user (ask_user) what to do instead."
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "declined", "message": msg}})
	return tools.Result{Content: string(b), IsError: true, Summary: summary}
}

// bashQuestion is the approval question for editors that show the whole
// command beside the picker: a one-line prompt, the command as sh, its
// working directory and timeout.
func bashQuestion(root, callID, command string, timeout int, suggest string) tools.Question {
	prompt := "Run this command? (shown above)"
	if n := len(strings.Split(strings.TrimRight(command, "\n"), "\n")); n > 1 {
		prompt = fmt.Sprintf("Run this command? (%d lines, shown above)", n)
	}
	return tools.Question{
		Prompt:         prompt,
		Items:          bashChoices(suggest),
		Safe:           0,
		Approval:       true,
		Detail:         strings.TrimRight(command, "\n"),
		DetailFiletype: "sh",
		DetailInfo:     []string{"bash_exec in " + root, fmt.Sprintf("timeout %ds", timeout)},
		Sandbox:        tools.NotSandboxed,
		CallID:         callID,
	}
}

// bashChoices are the approval choices; the "Always" ones name the rule
// they add (a prefix is edited before it is saved), and are left out when
// no rule can be proposed (what runs is built at run time).
func bashChoices(always string) []string {
	items := []string{BashDeny, BashDenyWithReason, BashRunOnce}
	if always != "" {
		items = append(items, BashAlwaysSession+always, BashAlwaysWorkspace+always)
	}
	return items
}

// bashAlwaysLabel names the proposed rule in the "Always" choices: the
// prefix ("go test"), or for a rule that holds the whole line "this exact
// command" / "this exact script (7 lines)".
func bashAlwaysLabel(r permission.Rule) string {
	switch {
	case r.Command == "":
		return ""
	case !r.Script:
		return r.Command
	}
	if n := strings.Count(r.Command, "\n") + 1; n > 1 {
		return fmt.Sprintf("this exact script (%d lines)", n)
	}
	return "this exact command"
}

// bashPrompt is the approval question for Prompters without Ask. A very long command is cut for
// display, and the prompt says so: approval still runs the whole command.
func bashPrompt(root, command string) string {
	shown := strings.TrimRight(command, "\n")
	if lines := strings.Split(shown, "\n"); len(lines) > bashPromptMaxLines {
		shown = strings.Join(lines[:bashPromptMaxLines], "\n")
	}
	if utf8.RuneCountInString(shown) > bashPromptMaxRunes {
		shown = string([]rune(shown)[:bashPromptMaxRunes])
	}
	note := ""
	if hidden := len(strings.TrimRight(command, "\n")) - len(shown); hidden > 0 {
		note = fmt.Sprintf("\n[… %d more bytes not shown; approving runs the whole command]", hidden)
	}
	return fmt.Sprintf("Run in %s?\n$ %s%s", root, shown, note)
}

// bashEnv is the child's environment: env without Fido's keys, plus the
// non-interactive settings (which replace inherited values).
func bashEnv(env []string) []string {
	// CDPATH would make `cd sub` leave the workspace, which the rules
	// take to mean ./sub.
	drop := map[string]bool{"CDPATH": true}
	// Fido's keys: a command like `env` must not put them into the conversation.
	for _, k := range secret.Env {
		drop[k] = true
	}
	for _, kv := range bashQuietEnv {
		drop[kv[:strings.IndexByte(kv, '=')]] = true
	}
	out := make([]string, 0, len(env)+len(bashQuietEnv))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, bashQuietEnv...)
}

// outputCapture keeps the first headMax and the last tailMax bytes written.
type outputCapture struct {
	headMax, tailMax int
	head, tail       []byte
	total            int64
}

func (h *outputCapture) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.headMax - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*h.tailMax {
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.tailMax:]...)
	}
	return n, nil
}

// render is the output section of the result: everything, or head and tail
// around a marker saying how much was left out.
func (h *outputCapture) render() string {
	if h.total == 0 {
		return "output: (none)\n"
	}
	head, tail := h.head, h.tail
	if len(tail) > h.tailMax {
		tail = tail[len(tail)-h.tailMax:]
	}
	omitted := h.total - int64(len(head)) - int64(len(tail))
	var b strings.Builder
	if omitted == 0 {
		fmt.Fprintf(&b, "output (stdout and stderr interleaved, %d bytes):\n", h.total)
		b.WriteString(strings.ToValidUTF8(string(head)+string(tail), "\uFFFD"))
	} else {
		// Cut at character boundaries; the partial characters count as omitted.
		if cut := utf8PartialSuffix(head); cut < len(head) {
			omitted += int64(len(head) - cut)
			head = head[:cut]
		}
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
			omitted++
		}
		fmt.Fprintf(&b, "output (stdout and stderr interleaved, %d bytes; only the first %d and last %d bytes are shown):\n",
			h.total, len(head), len(tail))
		b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
		if len(head) > 0 && head[len(head)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "… %d bytes omitted …\n", omitted)
		b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	}
	if s := b.String(); !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// shortDuration is a short human duration: 0.3s, 12.5s, 2m05s.
func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// wholeSeconds formats a whole-second timeout: 120s.
func wholeSeconds(d time.Duration) string { return fmt.Sprintf("%ds", int(d.Seconds())) }

// utf8PartialSuffix returns where an incomplete UTF-8 sequence at the end of b
// starts, or len(b) when b ends on a character boundary.
func utf8PartialSuffix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
