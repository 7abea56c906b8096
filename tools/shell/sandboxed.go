package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/text"
)

// bash_exec in the OS sandbox (tools/sandbox). Who decides what: the
// model gives a command and a timeout, nothing else; the user's rules and
// answers decide whether it runs and with what widening of the sandbox
// (network, .git writes, write access to a path, a protected path
// readable, a Unix socket). When a command is refused something, the
// result names each refusal, and the user (never the model) may approve
// one wider run or a rule for it.

// The sandbox modes (setup({ sandbox = … }), FIDO_SANDBOX).
const (
	// SandboxOff runs commands as before the sandbox: with the user's
	// full authority once approved.
	SandboxOff = "off"
	// SandboxAsk (the default) runs every command in the sandbox where the
	// machine enforces one, and asks exactly as SandboxOff does.
	SandboxAsk = "ask"
	// SandboxAuto is SandboxAsk, and a command asked about only for
	// reasons the sandbox makes harmless runs without asking
	// (permission.Decision.SandboxHarmless).
	SandboxAuto = "auto"
)

// ParseSandboxMode reads a mode; "" is the default (ask).
func ParseSandboxMode(s string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(s)); m {
	case "":
		return SandboxAsk, nil
	case SandboxOff, SandboxAsk, SandboxAuto:
		return m, nil
	}
	return SandboxAsk, fmt.Errorf("sandbox = %q: want \"off\", \"ask\" or \"auto\"", s)
}

// SandboxConfig is what the composition root knows about the sandbox.
type SandboxConfig struct {
	Mode string
	// Support is what the machine enforces; Probe, when set, measures it
	// on first use instead (sandbox.Probe starts the helper, so the host
	// does it in the background rather than while it starts).
	Support sandbox.Support
	Probe   func() sandbox.Support
	// Helper is the fido binary that becomes the sandbox helper ("" is
	// this executable).
	Helper string
	// Home, StateDir (Fido's whole state root) and RuntimeDir are hidden
	// from commands (sandbox.DefaultDeny).
	Home, StateDir, RuntimeDir string
	// TempRoot holds the per-conversation temp dirs (made on first use).
	TempRoot string
	// CacheDir holds the build caches of workspace-write commands (Go's,
	// npm's, XDG_CACHE_HOME): per workspace, so nothing one workspace's
	// commands put there reaches another's builds. ReadOnlyCacheDir is the
	// caches of read-only commands (subagents, plan mode), never used by
	// a command that can write the workspace.
	CacheDir, ReadOnlyCacheDir string
	// NvimSocket is Neovim's server address: never offered as a widening
	// (through it a command would run anything unsandboxed).
	NvimSocket string
	// Personal are the user's configuration, state, data and cache
	// directories ($XDG_CONFIG_HOME …, besides ~/.config, ~/.local and
	// ~/.cache): writes there are never offered as a widening.
	Personal []string
}

// commandBox is the tool's sandbox state.
type commandBox struct {
	cfg   SandboxConfig
	probe sync.Once
}

// support is what the machine enforces (probed once).
func (b *commandBox) support() sandbox.Support {
	b.probe.Do(func() {
		if b.cfg.Probe != nil {
			b.cfg.Support = b.cfg.Probe()
		}
	})
	return b.cfg.Support
}

// Support is what the machine enforces, for :checkhealth and the notice.
func (t *BashTool) Support() sandbox.Support {
	if t.box == nil {
		return sandbox.Support{Reason: "no sandbox is configured"}
	}
	return t.box.support()
}

// WithSandbox makes the tool run commands in the sandbox (mode ask or
// auto) where cfg.Support says it is enforced, and say so everywhere
// where it is not. Without it (or with mode off) commands run as before.
func (t *BashTool) WithSandbox(cfg SandboxConfig) *BashTool {
	if cfg.Helper == "" {
		cfg.Helper, _ = os.Executable()
	}
	t.box = &commandBox{cfg: cfg}
	return t
}

// SandboxState is the statusline's word for how commands run: "auto" or
// "on" (sandboxed), "off" (the user turned it off), "unavailable" (the
// machine cannot enforce it) or "" (no sandbox configured).
func (t *BashTool) SandboxState() string {
	if t.box == nil {
		return ""
	}
	switch {
	case t.box.cfg.Mode == SandboxOff:
		return "off"
	case !t.box.support().Enforced:
		return "unavailable"
	case t.box.cfg.Mode == SandboxAuto:
		return "auto"
	}
	return "on"
}

// enforced reports whether commands run sandboxed.
func (b *commandBox) enforced() bool {
	return b != nil && b.cfg.Mode != SandboxOff && b.support().Enforced
}

// ReadOnlySandboxed implements tools.ReadOnlyCapable: subagents and plan
// mode may run commands, in a read-only sandbox, only where one is
// enforced.
func (t *BashTool) ReadOnlySandboxed() bool { return t.box.enforced() }

// runPlan is how one call runs: sandboxed or not, read-only or not, and
// the widening the rules and the user gave it.
type runPlan struct {
	box      *commandBox
	readOnly bool
	tempDir  string
	// widen is what this run may do beyond the defaults; rule names the
	// rules it came from, for the preview.
	widen permission.Widening
	// predicted is the widening the approval offers before the first run
	// (the network for git push): cautions of the permission checker.
	predicted permission.Widening
}

// plan is nil when the tool has no sandbox configured (as before it).
func (t *BashTool) plan(inv tools.Invocation) *runPlan {
	if t.box == nil {
		return nil
	}
	p := &runPlan{box: t.box, readOnly: inv.IsSubagent() || inv.PlanMode}
	if t.box.enforced() {
		p.tempDir = t.box.tempDir(inv)
	}
	return p
}

// on reports whether the plan runs the command sandboxed.
func (p *runPlan) on() bool { return p != nil && p.box.enforced() }

// approval is what the rules or the user approved: the widening the run
// gets, and whether auto mode ran it without asking.
type approval struct {
	widen permission.Widening
	auto  bool
}

// offered is the widening the approval offers before the first run.
func (p *runPlan) offered() permission.Widening {
	if !p.on() || p.readOnly {
		return permission.Widening{}
	}
	return p.predicted
}

// ruled is the widening the rules give the line.
func (p *runPlan) ruled() permission.Widening {
	if !p.on() || p.readOnly {
		return permission.Widening{}
	}
	return p.widen
}

// tempDir is the per-conversation temp dir (a subagent's and plan mode's
// are their own: nothing a read-only command leaves there reaches a
// command that can write).
func (b *commandBox) tempDir(inv tools.Invocation) string {
	conv := inv.Conversation
	if conv == "" {
		conv = "conversation"
	}
	name := safeName(conv)
	switch {
	case inv.IsSubagent():
		name += "-subagent-" + safeName(inv.Identity.AgentID)
	case inv.PlanMode:
		name += "-plan"
	}
	return filepath.Join(b.cfg.TempRoot, name)
}

func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
	if s == "" || s == "." || s == ".." {
		return "_"
	}
	return text.ShortenTo(s, 64)
}

// decided takes what the rules decided into the plan: the widening they
// give this line (read-only runs are never widened) and the widening to
// offer before the first run.
func (p *runPlan) decided(root string, d permission.Decision) {
	if !p.on() || p.readOnly {
		return
	}
	p.widen = d.Widen
	w := permission.Widening{Network: d.NeedsNetwork(), GitWrite: d.NeedsGitWrite()}
	if d.NeedsSSH(func() bool { return gitRemotesUseSSH(root) }) {
		w = w.Union(p.box.sshWidening())
	}
	if !p.widen.Covers(w) {
		p.predicted = w
	}
}

// sshWidening is what SSH needs: ~/.ssh readable and the agent's socket.
func (b *commandBox) sshWidening() permission.Widening {
	w := permission.Widening{Read: []string{"~/.ssh"}}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" && filepath.IsAbs(sock) {
		if _, err := os.Stat(sock); err == nil {
			w.Sockets = []string{sock}
		}
	}
	return w
}

// unasked reports whether auto mode runs d's line without asking: the
// sandbox is enforced and every reason to ask is one it makes harmless
// (a read-only sandbox contains more: writes, deletions and the network
// fail there).
func (p *runPlan) unasked(d permission.Decision) bool {
	if !p.on() || p.box.cfg.Mode != SandboxAuto || !p.widen.IsZero() {
		return false
	}
	if p.readOnly {
		return d.ReadOnlyHarmless()
	}
	return d.SandboxHarmless()
}

// info is the approval preview's lines about the sandbox.
func (p *runPlan) info() []string {
	if p == nil {
		return nil
	}
	if !p.on() {
		return []string{"NOT sandboxed: " + p.box.notSandboxedReason()}
	}
	return []string{"sandbox: " + p.describe(p.widen)}
}

// notSandboxedReason says why commands run with the user's authority.
func (b *commandBox) notSandboxedReason() string {
	if b.cfg.Mode == SandboxOff {
		return `sandbox = "off" (the command runs with your full authority)`
	}
	return b.support().Reason + " (the command runs with your full authority)"
}

// describe says what a run under widening w may touch, in one line.
func (p *runPlan) describe(w permission.Widening) string {
	if p.readOnly {
		return "read-only (writes only in its temp dir), no network"
	}
	parts := []string{"workspace-write"}
	if w.GitWrite {
		parts = append(parts, ".git writable")
	} else {
		parts = append(parts, ".git read-only")
	}
	if w.Network {
		parts = append(parts, "network")
	} else {
		parts = append(parts, "no network")
	}
	for _, r := range w.Read {
		parts = append(parts, r+" readable")
	}
	for _, x := range w.Write {
		parts = append(parts, "write access to "+x)
	}
	for _, s := range w.Sockets {
		parts = append(parts, "socket "+s)
	}
	return strings.Join(parts, ", ")
}

// policy is the sandbox policy of a run under widening w.
func (p *runPlan) policy(root string, w permission.Widening) sandbox.Policy {
	cfg := p.box.cfg
	pol := sandbox.Policy{
		Workspace: root,
		TempDir:   p.tempDir,
		ReadOnly:  p.readOnly,
		// Every process of a bash_exec command ends before it returns, so
		// a .git it creates can be moved aside before anything runs git.
		QuarantineNewGit: !p.readOnly,
		Deny:             sandbox.DefaultDeny(cfg.Home, cfg.StateDir, cfg.RuntimeDir, os.Getuid() == 0),
	}
	if p.readOnly {
		if cfg.ReadOnlyCacheDir != "" {
			pol.Writable = append(pol.Writable, cfg.ReadOnlyCacheDir)
		}
		return pol
	}
	if cfg.CacheDir != "" {
		pol.Writable = append(pol.Writable, cfg.CacheDir)
	}
	pol.Network, pol.GitWritable = w.Network, w.GitWrite
	for _, x := range w.Write {
		pol.Writable = append(pol.Writable, p.box.expand(x))
	}
	for _, s := range w.Sockets {
		pol.UnixSockets = append(pol.UnixSockets, p.box.expand(s))
	}
	if len(w.Read) > 0 {
		var deny []string
		for _, d := range pol.Deny {
			if !containsPath(w.Read, p.box.tildify(d)) {
				deny = append(deny, d)
			}
		}
		pol.Deny = deny
	}
	return pol
}

func containsPath(list []string, p string) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// expand turns ~/x into the home directory's x.
func (b *commandBox) expand(p string) string {
	if strings.HasPrefix(p, "~/") && b.cfg.Home != "" {
		return filepath.Join(b.cfg.Home, p[2:])
	}
	return p
}

// tildify writes a path under the home directory as ~/x.
func (b *commandBox) tildify(p string) string {
	if h := b.cfg.Home; h != "" && strings.HasPrefix(p, h+"/") {
		return "~/" + strings.TrimPrefix(p, h+"/")
	}
	return p
}

// boxRun is one run's sandbox, for execute: nil runs as before the
// sandbox (no sandbox configured).
type boxRun struct {
	plan   *runPlan
	policy sandbox.Policy
	widen  permission.Widening
	// report is what the sandbox refused (after the run); unavailable is
	// set when the sandbox could not be applied and nothing ran.
	report      sandbox.Report
	unavailable error
}

// run is how execute starts and waits for the command.
type starter interface {
	Start() error
	Wait() error
	process() *exec.Cmd
	// quarantine moves aside a .git the command created where none was
	// allowed (sandbox.Cmd.QuarantineGit); every process has ended.
	quarantine() (string, error)
}

type plainStarter struct{ *exec.Cmd }

func (s plainStarter) process() *exec.Cmd          { return s.Cmd }
func (s plainStarter) quarantine() (string, error) { return "", nil }

type boxStarter struct {
	c   *sandbox.Cmd
	run *boxRun
}

func (s boxStarter) Start() error                { return s.c.Start() }
func (s boxStarter) process() *exec.Cmd          { return s.c.Cmd }
func (s boxStarter) quarantine() (string, error) { return s.c.QuarantineGit() }
func (s boxStarter) Wait() error {
	err := s.c.Wait()
	s.run.report = s.c.Report()
	return err
}

// command prepares bash -c command: in the sandbox when the run has one.
func (b *boxRun) command(bash, command string) (*exec.Cmd, starter, error) {
	if b == nil || !b.plan.on() {
		c := exec.Command(bash, "-c", command)
		return c, plainStarter{c}, nil
	}
	c, err := sandbox.CommandWithHelper(context.Background(), b.plan.box.cfg.Helper, b.policy, bash, "-c", command)
	if err != nil {
		return nil, nil, err
	}
	return c.Cmd, boxStarter{c: c, run: b}, nil
}

// env is the command's environment: in the sandbox, TMPDIR is its temp
// dir and the build caches are the sandbox's (the user's own are not
// writable there, and must not be poisoned for builds outside it).
func (b *boxRun) env(base []string) []string {
	if b == nil || !b.plan.on() {
		return base
	}
	env := b.policy.Env(base)
	cache := b.plan.box.cfg.CacheDir
	if b.plan.readOnly {
		cache = b.plan.box.cfg.ReadOnlyCacheDir
	}
	if cache == "" {
		return env
	}
	return setEnv(env, map[string]string{
		"XDG_CACHE_HOME":   cache,
		"GOCACHE":          filepath.Join(cache, "go-build"),
		"npm_config_cache": filepath.Join(cache, "npm"),
	})
}

// setEnv replaces or adds the variables in set.
func setEnv(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}

// failed is the result when the sandboxed command could not start.
func (b *boxRun) failed(err error) tools.Result {
	if b != nil && errors.Is(err, sandbox.ErrUnavailable) {
		b.unavailable = err
		return tools.ErrorResult("bash_exec: the sandbox could not be applied (%v); nothing was run", err)
	}
	return tools.ErrorResult("bash_exec: cannot start the command in the sandbox: %v; nothing was run", err)
}

// describe writes the result's sandbox lines: how it ran, what the
// sandbox refused, and a .git the command created that was moved aside
// (every process of the command has ended when it is called).
func (b *boxRun) describe(w *strings.Builder, s starter) {
	if b == nil {
		return
	}
	if !b.plan.on() {
		fmt.Fprintf(w, "sandbox: NOT sandboxed: %s\n", b.plan.box.notSandboxedReason())
		return
	}
	fmt.Fprintf(w, "sandbox: %s\n", b.plan.describe(b.widen))
	switch moved, err := s.quarantine(); {
	case err != nil:
		fmt.Fprintf(w, "warning: the command created .git, which its rule does not allow, and it could not be moved aside (%v): do not run git in this workspace before the user removed it\n", err)
	case moved != "":
		fmt.Fprintf(w, "note: the command created .git, which its rule does not allow (a .git planted in the workspace runs its hooks and configuration outside the sandbox): it was moved to %s. A rule allowing git writes (`allow git init with git-write`) lets git create it\n", filepath.Base(moved))
	}
	if rep := b.report.String(); rep != "" {
		w.WriteString(rep)
	}
	if !b.report.Named {
		w.WriteString("note: the sandbox could not name what it refused here (it runs inside another sandbox): a failure may be a refusal it does not list\n")
	}
}

// runCommand decides, asks and runs one bash_exec call: the rules and the
// user approve it; it runs in the sandbox where one is enforced; what the
// sandbox refused is named and the user may approve one wider run.
func (t *BashTool) runCommand(ctx context.Context, inv tools.Invocation, command string, timeout int, note string) tools.Result {
	plan := t.plan(inv)
	if plan != nil && plan.readOnly && !plan.on() {
		// The guard admits read-only callers only where the sandbox is
		// enforced; a direct call is refused the same way.
		return tools.CodedErrorResult("permission_denied", "bash_exec runs for a subagent or in plan mode only in a read-only sandbox, and commands are not sandboxed here (%s); nothing was run", plan.box.notSandboxedReason())
	}
	approved, res, ok := t.approve(ctx, inv.CallID, command, timeout, plan)
	if !ok {
		return res
	}
	dur := time.Duration(timeout) * time.Second
	if plan == nil {
		return t.execute(ctx, command, dur, note, nil)
	}
	run := plan.run(t.ws.Root, approved.widen)
	res = t.execute(ctx, command, dur, note, run)
	if approved.auto {
		res.Content = "note: run without asking: sandbox = \"auto\", and everything it was asked about stays inside the sandbox\n" + res.Content
	}
	if run.unavailable != nil {
		return t.unsandboxedFallback(ctx, inv, command, dur, note, plan, run.unavailable)
	}
	if !plan.on() || plan.readOnly || len(run.report.Denials) == 0 {
		return res
	}
	if !res.IsError {
		// Tools try many things they do without (telemetry, caches in
		// $HOME): a run that succeeded is not offered a wider one.
		res.Content += "note: the command succeeded; the refusals above did not stop it\n"
		return res
	}
	return t.offerWidening(ctx, inv, command, dur, note, plan, run, res)
}

// run is the sandbox of a run with widening w.
func (p *runPlan) run(root string, w permission.Widening) *boxRun {
	b := &boxRun{plan: p, widen: w}
	if p.on() {
		b.policy = p.policy(root, w)
	}
	return b
}

// unsandboxedFallback: the sandbox the probe promised could not be
// applied (the kernel refused a restriction). Nothing ran; the user may
// run it NOT sandboxed, once, after a question that says so.
func (t *BashTool) unsandboxedFallback(ctx context.Context, inv tools.Invocation, command string, dur time.Duration, note string, plan *runPlan, why error) tools.Result {
	const runAnyway = "Run once NOT sandboxed"
	fail := tools.CodedErrorResult("sandbox_unavailable", "the sandbox could not be applied (%v); nothing was run", why)
	if plan.readOnly || t.p == nil {
		return fail
	}
	q := tools.Question{
		Prompt:         "The sandbox could not be applied. Run this command NOT sandboxed?",
		Items:          []string{BashDeny, runAnyway},
		Approval:       true,
		Detail:         strings.TrimRight(command, "\n"),
		DetailFiletype: "sh",
		DetailInfo:     []string{"bash_exec in " + t.ws.Root},
		Sandbox:        "NOT sandboxed: " + why.Error(),
		CallID:         inv.CallID,
	}
	idx, err := tools.AskQuestion(ctx, t.p, q, q.Prompt+"\n$ "+command)
	if err != nil || idx < 0 || idx >= len(q.Items) || q.Items[idx] != runAnyway {
		return fail
	}
	off := &runPlan{box: &commandBox{cfg: SandboxConfig{Mode: SandboxOff}}}
	b := &boxRun{plan: off}
	res := t.execute(ctx, command, dur, note, b)
	res.Content = "note: the sandbox could not be applied (" + why.Error() + "); the user approved this run NOT sandboxed\n" + res.Content
	return res
}

// The widening question's choices.
const (
	BashWidenDeny    = "Deny (keep the refused run)"
	BashWidenOnce    = "Run again with "
	BashWidenSession = "Always this session: "
	BashWidenAlways  = "Always in this workspace: "
)

// offerWidening asks the user, after a sandboxed run was refused
// something, whether to run it once more with exactly what was refused
// (or to keep that as a rule), and runs it if so.
func (t *BashTool) offerWidening(ctx context.Context, inv tools.Invocation, command string, dur time.Duration, note string, plan *runPlan, first *boxRun, res tools.Result) tools.Result {
	need, left := plan.widening(t.ws.Root, first.report)
	for _, l := range left {
		res.Content += "note: " + l + "\n"
	}
	if need.IsZero() || t.p == nil {
		return declinedWidening(res, "")
	}
	wider := first.widen.Union(need)
	rule := t.rules.Checker(t.ws.Root).WideningRule(command, wider)
	items := []string{BashWidenDeny, BashWidenOnce + need.Phrase()}
	if rule.Command != "" {
		label := "`" + ruleLabel(rule) + "` with " + wider.Phrase()
		items = append(items, BashWidenSession+label, BashWidenAlways+label)
	}
	info := []string{"bash_exec in " + t.ws.Root, "sandbox: " + plan.describe(first.widen)}
	for _, d := range first.report.Denials {
		info = append(info, "refused: "+d.String())
	}
	info = append(info, "a wider run: "+plan.describe(wider))
	q := tools.Question{
		Prompt:         "The sandbox refused what this command tried. Run it again with " + need.Phrase() + "?",
		Items:          items,
		Safe:           0,
		Approval:       true,
		Detail:         strings.TrimRight(command, "\n"),
		DetailFiletype: "sh",
		DetailInfo:     info,
		CallID:         inv.CallID,
	}
	select {
	case <-t.asking:
		defer func() { t.asking <- struct{}{} }()
	case <-ctx.Done():
		return declinedWidening(res, "")
	}
	idx, err := tools.AskQuestion(ctx, t.p, q, q.Prompt+"\n$ "+command+"\n"+strings.Join(info[1:], "\n"))
	if err != nil || idx < 0 || idx >= len(items) || items[idx] == BashWidenDeny {
		return declinedWidening(res, need.Phrase())
	}
	switch choice := items[idx]; {
	case strings.HasPrefix(choice, BashWidenSession):
		if err := t.rules.Add(rule, permission.OriginSession); err != nil {
			return tools.ErrorResult("bash_exec: the rule could not be saved (%v); it was not run again", err)
		}
	case strings.HasPrefix(choice, BashWidenAlways):
		if err := t.rules.Add(rule, permission.OriginWorkspace); err != nil {
			return tools.ErrorResult("bash_exec: the rule could not be saved (%v); it was not run again", err)
		}
	}
	second := plan.run(t.ws.Root, wider)
	again := t.execute(ctx, command, dur, note, second)
	var b strings.Builder
	fmt.Fprintf(&b, "note: a first run in the sandbox (%s) was refused:\n", plan.describe(first.widen))
	for _, d := range first.report.Denials {
		b.WriteString("  " + d.String() + "\n")
	}
	fmt.Fprintf(&b, "note: the user approved running it again with %s; this is the second run (the first one's other effects remain)\n", need.Phrase())
	again.Content = b.String() + again.Content
	return again
}

// ruleLabel is a rule's command as the choice shows it.
func ruleLabel(r permission.Rule) string {
	if r.Script {
		if n := strings.Count(r.Command, "\n") + 1; n > 1 {
			return fmt.Sprintf("this exact script (%d lines)", n)
		}
		return "this exact command"
	}
	if r.Exact {
		return "exactly " + r.Command
	}
	return r.Command
}

// declinedWidening adds to a refused run's result that the model cannot
// widen the sandbox, and whether the user declined.
func declinedWidening(res tools.Result, offered string) tools.Result {
	msg := "note: the sandbox refused what is listed above. You cannot change the sandbox; only the user can allow more (an approval after a refused run, or a rule such as `allow git push with network`). Do not try to get around it: continue without it, or ask the user (ask_user)."
	if offered != "" {
		msg = "note: the user was asked to run it again with " + offered + " and declined. Do not retry it in another form: continue without it, or ask the user (ask_user)."
	}
	res.Content += msg + "\n"
	res.IsError = true
	return res
}

// widening is what the refusals in rep need, as a widening the user can
// approve, and the refusals no widening is offered for (said in the
// result).
func (p *runPlan) widening(root string, rep sandbox.Report) (permission.Widening, []string) {
	var w permission.Widening
	var left []string
	git := filepath.Join(resolved(root), ".git")
	deny := sandbox.DefaultDeny(p.box.cfg.Home, p.box.cfg.StateDir, p.box.cfg.RuntimeDir, os.Getuid() == 0)
	for _, d := range rep.Denials {
		switch {
		case d.Addr != "":
			w.Network = true
		case d.Path == "" || strings.HasPrefix(d.Path, "@"):
			left = append(left, "no wider run is offered for "+d.String())
		case d.Op == "connect":
			if p.box.cfg.NvimSocket != "" && resolved(p.box.cfg.NvimSocket) == d.Path {
				left = append(left, "Neovim's own socket is never offered: through it a command would run anything outside the sandbox")
				continue
			}
			w.Sockets = appendUnique(w.Sockets, d.Path)
		case d.Path == git || strings.HasPrefix(d.Path, git+"/") || strings.Contains(d.Rule, ".git is protected"):
			w.GitWrite = true
		case hiddenBy(d.Path, deny) != "":
			h := hiddenBy(d.Path, deny)
			switch {
			case h == p.box.cfg.StateDir || h == p.box.cfg.RuntimeDir || h == filepath.Join(p.box.cfg.Home, ".config", "fido"):
				left = append(left, "Fido's own state and configuration and your runtime directory ("+p.box.tildify(h)+") are never offered")
			case d.Op == "read" || d.Op == "list" || d.Op == "exec":
				w.Read = appendUnique(w.Read, p.box.tildify(h))
			default:
				left = append(left, "writing a protected path ("+p.box.tildify(h)+") is never offered")
			}
		case d.Op == "read" || d.Op == "list" || d.Op == "exec":
			left = append(left, "no wider run is offered for "+d.String())
		case p.box.personal(d.Path):
			left = append(left, "writes in your home directory's top level or its configuration and state directories (~/.config, ~/.local, ~/.cache) are not offered as a wider run: what a command plants there can run later outside the sandbox; a rule can still allow a path (`allow … with write ~/.config/tool`)")
		default:
			if t := writeTarget(d); t != "" {
				w.Write = appendUnique(w.Write, t)
			} else {
				left = append(left, "no wider run is offered for "+d.String())
			}
		}
	}
	if rep.Dropped > 0 || !rep.Named {
		left = append(left, "the sandbox may have refused more than it lists")
	}
	return w, left
}

// personal reports a path in the home directory's top level or under its
// configuration, state and cache directories.
func (b *commandBox) personal(path string) bool {
	home := b.cfg.Home
	if home == "" {
		return false
	}
	home = resolved(home)
	if path == home || filepath.Dir(path) == home {
		return true
	}
	dirs := []string{filepath.Join(home, ".config"), filepath.Join(home, ".local"), filepath.Join(home, ".cache")}
	for _, d := range b.cfg.Personal {
		if d != "" {
			dirs = append(dirs, resolved(d))
		}
	}
	for _, dir := range dirs {
		if path == dir || strings.HasPrefix(path, dir+"/") {
			return true
		}
	}
	return false
}

// writeTarget is what to make writable for a refused write: the file
// itself when it exists (a write), else the directory it is created,
// removed or renamed in.
func writeTarget(d sandbox.Denial) string {
	if d.Op == "write" {
		if st, err := os.Stat(d.Path); err == nil && !st.IsDir() {
			return d.Path
		}
	}
	dir := filepath.Dir(d.Path)
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		if dir == "/" {
			break
		}
		dir = filepath.Dir(dir)
	}
	if dir == "/" {
		return "" // write access to everything is no wider run
	}
	for _, special := range []string{"/proc", "/sys", "/dev"} {
		if dir == special || strings.HasPrefix(dir, special+"/") {
			return ""
		}
	}
	return dir
}

// hiddenBy is the protected path (of deny) that holds path, or "".
func hiddenBy(path string, deny []string) string {
	for _, d := range deny {
		r := resolved(d)
		if path == r || strings.HasPrefix(path, r+"/") {
			return d
		}
	}
	return ""
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// promptNote is the sandbox line for prompts without a detail view.
func (p *runPlan) promptNote() string {
	if lines := p.info(); len(lines) > 0 {
		return "\n[" + strings.Join(lines, "; ") + "]"
	}
	return ""
}

// insertAfter inserts item after the first occurrence of after.
func insertAfter(items []string, after, item string) []string {
	for i, it := range items {
		if it == after {
			out := append(append(append([]string(nil), items[:i+1]...), item), items[i+1:]...)
			return out
		}
	}
	return append(items, item)
}

// ServerPolicy is the sandbox of a long-running server (a stdio MCP
// server whose entry or trust asks for it): writes in the workspace (its
// .git read-only; the top level read-only too where .git cannot be
// mounted read-only, since nothing checks for a planted .git while it
// runs), its own temp dir and the workspace's build caches, the network
// only if network, the protected paths hidden. The error wraps
// sandbox.ErrUnavailable where no sandbox is enforced. env sets TMPDIR
// and the caches.
func (t *BashTool) ServerPolicy(name string, network bool) (sandbox.Policy, func([]string) []string, error) {
	if t.box == nil || !t.box.support().Enforced {
		reason := "no sandbox is configured"
		if t.box != nil {
			reason = t.box.support().Reason
		}
		return sandbox.Policy{}, nil, fmt.Errorf("%w: %s", sandbox.ErrUnavailable, reason)
	}
	p := &runPlan{box: t.box, tempDir: filepath.Join(t.box.cfg.TempRoot, "mcp-"+safeName(name))}
	pol := p.policy(t.ws.Root, permission.Widening{Network: network})
	pol.QuarantineNewGit = false
	run := &boxRun{plan: p, policy: pol}
	return pol, run.env, nil
}

// gitRemotesUseSSH reports whether a remote of the workspace's repository
// is reached over SSH (git@host:path, ssh://…), or whether that cannot be
// told (no readable .git/config: yes, to be safe).
func gitRemotesUseSSH(root string) bool {
	b, err := confined.ReadPath(filepath.Join(root, ".git", "config"), 256<<10)
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(k) != "url" {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "ssh://") || strings.HasPrefix(v, "git+ssh://") ||
			!strings.Contains(v, "://") && strings.Contains(v, ":") && !strings.HasPrefix(v, "/") {
			return true
		}
	}
	return false
}
