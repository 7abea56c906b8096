//go:build linux && (amd64 || arm64)

package shell

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// scriptedAsker answers each question with the first item starting with
// the next answer ("" dismisses), and records the questions.
type scriptedAsker struct {
	mu      sync.Mutex
	answers []string
	asked   []tools.Question
}

func (a *scriptedAsker) Select(context.Context, string, []string) (int, error) {
	panic("Select called on an Asker")
}

func (a *scriptedAsker) Input(_ context.Context, _, def string) (string, bool, error) {
	return def, true, nil
}

func (a *scriptedAsker) Ask(_ context.Context, q tools.Question) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if len(a.answers) == 0 {
		return -1, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	for i, it := range q.Items {
		if ans != "" && strings.HasPrefix(it, ans) {
			return i, nil
		}
	}
	return -1, nil
}

func (a *scriptedAsker) questions() []tools.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]tools.Question(nil), a.asked...)
}

// sandboxCache is one build cache for this package's sandboxed go
// commands, kept between runs (a cold one compiles the standard library).
var sandboxCache = sync.OnceValue(func() string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("fido-shell-sandbox-cache-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		panic(err)
	}
	return dir
})

// boxed is a workspace, a fake home with secrets, Fido's state dir and a
// tree outside, with bash_exec running in the sandbox (mode).
type boxed struct {
	ws      *workspace.Workspace
	home    string
	outside string
	rules   *permission.Store
	asker   *scriptedAsker
	tool    *BashTool
}

func newBoxed(t *testing.T, mode string, answers ...string) *boxed {
	t.Helper()
	sup := sandbox.Probe()
	if !sup.Enforced {
		t.Skip("no sandbox here: " + sup.Reason)
	}
	ws, _ := toolstest.Workspace(t, nil)
	b := &boxed{ws: ws, home: t.TempDir(), outside: t.TempDir(), asker: &scriptedAsker{answers: answers}}
	require.NoError(t, os.MkdirAll(filepath.Join(b.home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(b.home, ".ssh", "id_ed25519"), []byte("SECRET-KEY"), 0o600))
	b.rules, _ = permission.OpenStore(filepath.Join(t.TempDir(), "permissions.json"), nil)
	helper, err := os.Executable()
	require.NoError(t, err)
	b.tool = NewBashTool(ws, b.asker).WithPermissions(b.rules).WithSandbox(SandboxConfig{
		Mode: mode, Support: sup, Helper: helper, Home: b.home, StateDir: filepath.Join(b.home, ".local/state/fido"),
		TempRoot: t.TempDir(), CacheDir: sandboxCache(), ReadOnlyCacheDir: sandboxCache(),
	})
	t.Setenv("HOME", b.home)
	return b
}

func (b *boxed) run(t *testing.T, inv tools.Invocation, command string) tools.Result {
	t.Helper()
	res := toolstest.Invoke(t, context.Background(), b.tool, inv, map[string]any{"command": command})
	t.Logf("$ %s\n%s", command, res.Content)
	return res
}

// A command writing outside the workspace is refused by the sandbox; the
// result names the path and the rule; the approval preview said how it
// would run; declining the wider run leaves the outside untouched.
func TestSandboxedWriteOutsideIsRefusedAndNamed(t *testing.T) {
	b := newBoxed(t, SandboxAsk, BashRunOnce, BashWidenDeny)
	target := filepath.Join(b.outside, "planted")
	res := b.run(t, toolstest.Main, `mkdir -p sub && echo in > sub/inside && cat sub/inside && echo out > "`+b.outside+`/planted"`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "sandbox: workspace-write, .git read-only, no network")
	assert.Contains(t, res.Content, "create "+target+": outside the writable directories")
	assert.Contains(t, res.Content, "in\n", "the workspace part ran")
	assert.Contains(t, res.Content, "status: exit code 1")
	assert.Contains(t, res.Content, "the user was asked to run it again with write access to "+b.outside+" and declined")
	_, err := os.Stat(target)
	assert.True(t, os.IsNotExist(err), "nothing was written outside")
	qs := b.asker.questions()
	require.Len(t, qs, 2)
	assert.Equal(t, "sandbox: workspace-write, .git read-only, no network", qs[0].Sandbox)
	assert.Equal(t, "The sandbox refused what this command tried. Run it again with write access to "+b.outside+"?", qs[1].Prompt)
	assert.Contains(t, qs[1].DetailInfo, "refused: create "+target+": outside the writable directories ("+strings.Join(writableOf(t, b), ", ")+")")
	assert.Equal(t, BashWidenDeny, qs[1].Items[qs[1].Safe])
}

func writableOf(t *testing.T, b *boxed) []string {
	var out []string
	for _, p := range []string{b.ws.Root, b.tool.plan(toolstest.Main).tempDir, sandboxCache()} {
		r, err := filepath.EvalSymlinks(p)
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// The model has no argument that leaves the sandbox.
func TestBashExecHasNoSandboxArgument(t *testing.T) {
	b := newBoxed(t, SandboxAsk)
	res := toolstest.Invoke(t, context.Background(), b.tool, toolstest.Main, map[string]any{"command": "true", "sandbox": false})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, `unknown argument \"sandbox\"`)
	assert.NotContains(t, string(b.tool.Parameters()), "sandbox")
	assert.NotContains(t, string(b.tool.Parameters()), "network")
}

// listen is a TCP listener on loopback that answers "hello".
func listen(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 1024)
			_, _ = c.Read(buf)
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n"))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// A refused connection is named (host:port); the user approves one run
// with the network in the widening question; as a workspace rule
// ("curl" may use the network) the next call asks nothing.
func TestSandboxWideningApprovalFlow(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	addr := listen(t)
	cmd := "curl -sS --max-time 5 http://" + addr + "/"
	b := newBoxed(t, SandboxAsk, BashRunOnce, BashWidenOnce)
	res := b.run(t, toolstest.Main, cmd)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "connect "+addr+": network access is off", "the first run's refusal is named")
	assert.Contains(t, res.Content, "the user approved running it again with network")
	assert.Contains(t, res.Content, "sandbox: workspace-write, .git read-only, network")
	assert.Contains(t, res.Content, "hello")
	qs := b.asker.questions()
	require.Len(t, qs, 2)
	assert.Contains(t, qs[0].Items, BashRunOnceWith+"network", "curl is known to need the network")
	assert.Equal(t, []string{BashWidenDeny, BashWidenOnce + "network", BashWidenSession + "`curl` with network", BashWidenAlways + "`curl` with network"}, qs[1].Items)
	assert.Contains(t, qs[1].DetailInfo, "refused: connect "+addr+": network access is off in the sandbox")

	// Now as a workspace rule: stored, and the next call asks nothing.
	b.asker.answers = []string{BashRunOnce, BashWidenAlways}
	res = b.run(t, toolstest.Main, cmd)
	assert.Contains(t, res.Content, "hello")
	var rules []string
	for _, r := range b.rules.All() {
		rules = append(rules, r.String()+" ["+string(r.Origin)+"]")
	}
	assert.Equal(t, []string{"allow curl with network [workspace]"}, rules)
	before := len(b.asker.questions())
	res = b.run(t, toolstest.Main, cmd)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "hello")
	assert.Contains(t, res.Content, "sandbox: workspace-write, .git read-only, network")
	assert.Len(t, b.asker.questions(), before, "the rule decided: no question")
	// The rule widens curl only: another command on the same line gets no network.
	b.asker.answers = []string{BashRunOnce, BashWidenDeny}
	res = b.run(t, toolstest.Main, "echo start; python3 -c 'import socket; socket.create_connection((\""+strings.Split(addr, ":")[0]+"\", "+strings.Split(addr, ":")[1]+"))' && "+cmd)
	assert.Contains(t, res.Content, "network access is off")
}

// Up front: a command known to need the network offers "Run once with
// network"; chosen, it runs with it at once.
func TestSandboxRunOnceWithNetwork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	addr := listen(t)
	b := newBoxed(t, SandboxAsk, BashRunOnceWith)
	res := b.run(t, toolstest.Main, "curl -sS --max-time 5 http://"+addr+"/")
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "hello")
	assert.Len(t, b.asker.questions(), 1)
}

// Auto mode: a command asked about only for reasons the sandbox contains
// runs without a question, sandboxed; a network command still asks, and
// so do deletions and opaque code.
func TestSandboxAutoMode(t *testing.T) {
	b := newBoxed(t, SandboxAuto)
	res := b.run(t, toolstest.Main, "mkdir -p build && echo built > build/out.txt && cat build/out.txt")
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "built")
	assert.Contains(t, res.Content, `note: run without asking: sandbox = "auto"`)
	assert.Contains(t, res.Content, "sandbox: workspace-write, .git read-only, no network")
	assert.Empty(t, b.asker.questions(), "auto mode asked nothing")

	for _, cmd := range []string{"curl -sS http://" + listen(t) + "/", "rm -rf build", "sh -c 'echo hi'", "echo x > " + filepath.Join(b.outside, "f")} {
		before := len(b.asker.questions())
		res = b.run(t, toolstest.Main, cmd)
		assert.True(t, res.IsError, cmd)
		assert.Len(t, b.asker.questions(), before+1, "%s still asks", cmd)
	}
	_, err := os.Stat(filepath.Join(b.ws.Root, "build", "out.txt"))
	assert.NoError(t, err, "the dismissed rm ran nothing")
	// A deny rule still refuses in auto mode.
	require.NoError(t, b.rules.Add(permission.Rule{Effect: permission.Deny, Command: "make"}, permission.OriginSession))
	res = b.run(t, toolstest.Main, "make all")
	assert.Contains(t, res.Content, "denied_by_rule")
}

// On a kernel without Landlock (simulated: the helper sees ABI 0) nothing
// runs unsandboxed while looking sandboxed: the command does not run, the
// result says the sandbox could not be applied, and the user is asked
// whether to run it NOT sandboxed.
func TestSandboxNoLandlockNeverRunsSilently(t *testing.T) {
	b := newBoxed(t, SandboxAsk, BashRunOnce, BashDeny)
	t.Setenv("FIDO_SANDBOX_TEST_NO_LANDLOCK", "1")
	marker := filepath.Join(b.ws.Root, "ran")
	res := b.run(t, toolstest.Main, "touch ran")
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "the sandbox could not be applied")
	assert.Contains(t, res.Content, "this kernel has no Landlock")
	assert.Contains(t, res.Content, "nothing was run")
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "nothing ran")
	qs := b.asker.questions()
	require.Len(t, qs, 2)
	assert.Contains(t, qs[1].Prompt, "Run this command NOT sandboxed?")

	// And where the probe already says so, every question and result says
	// NOT sandboxed, and auto mode asks like ask mode.
	sup := sandbox.Support{Reason: "Landlock is not available (simulated)"}
	ws, _ := toolstest.Workspace(t, nil)
	asker := &scriptedAsker{answers: []string{BashRunOnce}}
	tool := NewBashTool(ws, asker).WithSandbox(SandboxConfig{Mode: SandboxAuto, Support: sup, TempRoot: t.TempDir()})
	res = toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": "touch ran"})
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "sandbox: NOT sandboxed: Landlock is not available (simulated)")
	require.Len(t, asker.questions(), 1, "auto mode without a sandbox asks")
	assert.Equal(t, "NOT sandboxed: Landlock is not available (simulated) (the command runs with your full authority)", asker.questions()[0].Sandbox)
	assert.Equal(t, "unavailable", tool.SandboxState())
	assert.False(t, tool.ReadOnlySandboxed(), "subagents and plan mode get no commands")
}

// git commit works with a rule that allows git writes; without it the
// sandbox refuses the .git write and says so.
func TestSandboxGitCommitNeedsTheRule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	b := newBoxed(t, SandboxAsk, BashWidenDeny)
	t.Setenv("GIT_AUTHOR_NAME", "T")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "T")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	git := func(args ...string) string {
		c := exec.Command("git", args...)
		c.Dir = b.ws.Root
		out, err := c.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(b.ws.Root, "a.txt"), []byte("a\n"), 0o644))
	git("add", "a.txt")
	require.NoError(t, b.rules.Add(permission.Rule{Effect: permission.Allow, Command: "git commit"}, permission.OriginSession))
	res := b.run(t, toolstest.Main, "git commit -qm first")
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, ".git read-only")
	assert.Contains(t, res.Content, "the workspace's .git is read-only (this command's rule does not allow git writes)")
	assert.Contains(t, res.Content, "the user was asked to run it again with .git writable and declined")
	assert.NotContains(t, git("log", "--oneline", "--all"), "first")

	rule, err := permission.ParseRule("allow git commit with git-write")
	require.NoError(t, err)
	require.NoError(t, b.rules.Add(rule, permission.OriginSession))
	res = b.run(t, toolstest.Main, "git commit -qm first")
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "sandbox: workspace-write, .git writable, no network")
	assert.Contains(t, git("log", "--oneline"), "first")
	assert.Len(t, b.asker.questions(), 1, "only the refused run asked (the widening)")
}

// A subagent's command runs in a read-only sandbox: go test works, a file
// in the workspace cannot be created, and no widening is offered.
func TestSandboxSubagentReadOnly(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go")
	}
	b := newBoxed(t, SandboxAsk, BashRunOnce)
	toolstest.WriteTree(t, b.ws.Root, map[string]string{
		"go.mod":      "module example.com/small\n\ngo 1.22\n",
		"add.go":      "package small\n\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go": "package small\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
	})
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	sub := tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent, AgentID: "sub_1", ParentRole: tools.RoleMain}, DelegationDepth: 1}
	_, denied := tools.Guard(sub, b.tool)
	assert.False(t, denied, "the guard admits bash_exec where the read-only sandbox is enforced")
	res := b.run(t, sub, "go test ./... && touch created")
	assert.Contains(t, res.Content, "ok  \texample.com/small")
	assert.Contains(t, res.Content, "sandbox: read-only (writes only in its temp dir), no network")
	assert.Contains(t, res.Content, "create "+filepath.Join(resolvedRoot(t, b.ws.Root), "created")+": read-only sandbox")
	_, err := os.Stat(filepath.Join(b.ws.Root, "created"))
	assert.True(t, os.IsNotExist(err))
	qs := b.asker.questions()
	require.Len(t, qs, 1, "no widening question for a subagent")
	assert.Equal(t, "sandbox: read-only (writes only in its temp dir), no network", qs[0].Sandbox)

	// Plan mode likewise.
	plan := tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, PlanMode: true}
	b.asker.answers = []string{BashRunOnce}
	res = b.run(t, plan, "echo x > planned.txt; git --version >/dev/null; echo done")
	assert.Contains(t, res.Content, "read-only sandbox")
	_, err = os.Stat(filepath.Join(b.ws.Root, "planned.txt"))
	assert.True(t, os.IsNotExist(err))
}

func resolvedRoot(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

// The protected paths stay hidden, and a hidden read offers "~/.ssh
// readable" by name; approved, that run reads it.
func TestSandboxHiddenReadWidening(t *testing.T) {
	b := newBoxed(t, SandboxAsk, BashRunOnce, BashWidenOnce)
	res := b.run(t, toolstest.Main, `cat "$HOME/.ssh/id_ed25519"`)
	assert.Contains(t, res.Content, "hidden in the sandbox")
	assert.Contains(t, res.Content, "SECRET-KEY", "the user approved the wider run")
	qs := b.asker.questions()
	require.Len(t, qs, 2)
	assert.Contains(t, qs[1].Items, BashWidenOnce+"~/.ssh readable")
}

// In a workspace without .git the top level is writable, and a .git the
// command plants is moved aside before anything can run git there.
func TestSandboxPlantedGitIsMovedAside(t *testing.T) {
	b := newBoxed(t, SandboxAsk, BashRunOnce)
	res := b.run(t, toolstest.Main, `mkdir -p .git && printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' > .git/config && echo top > top.txt`)
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "note: the command created .git, which its rule does not allow")
	_, err := os.Stat(filepath.Join(b.ws.Root, ".git"))
	assert.True(t, os.IsNotExist(err), "no .git is left in the workspace")
	moved, _ := filepath.Glob(filepath.Join(b.ws.Root, ".git.fido-quarantine-*"))
	assert.Len(t, moved, 1)
	got, err := os.ReadFile(filepath.Join(b.ws.Root, "top.txt"))
	require.NoError(t, err)
	assert.Equal(t, "top\n", string(got), "the top level is writable")
}

// A refused write to the user's configuration (what a command plants there
// can run later outside the sandbox) is named but never offered as a
// wider run; a failing command with only such refusals asks nothing more.
func TestSandboxPersonalWritesAreNotOffered(t *testing.T) {
	b := newBoxed(t, SandboxAsk, BashRunOnce, BashWidenOnce)
	res := b.run(t, toolstest.Main, `mkdir -p "$HOME/.config/tool" && echo x > "$HOME/.config/tool/rc"`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, filepath.Join(b.home, ".config")+": outside the writable directories")
	assert.Contains(t, res.Content, "are not offered as a wider run")
	assert.Len(t, b.asker.questions(), 1, "no widening question")
	_, err := os.Stat(filepath.Join(b.home, ".config", "tool"))
	assert.True(t, os.IsNotExist(err))
}

// git push offers the network up front, and ~/.ssh (with the agent's
// socket) only when a remote of the repository is reached over SSH.
func TestSandboxGitPushOffersSSHForSSHRemotes(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://example.com/r.git", BashRunOnceWith + "network"},
		{"git@example.com:me/r.git", BashRunOnceWith + "network and ~/.ssh readable"},
	} {
		b := newBoxed(t, SandboxAsk) // every question dismissed
		t.Setenv("SSH_AUTH_SOCK", "")
		require.NoError(t, os.MkdirAll(filepath.Join(b.ws.Root, ".git"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(b.ws.Root, ".git", "config"), []byte("[remote \"origin\"]\n\turl = "+tc.url+"\n"), 0o644))
		b.run(t, toolstest.Main, "git push origin main")
		qs := b.asker.questions()
		require.Len(t, qs, 1)
		assert.Contains(t, qs[0].Items, tc.want, tc.url)
	}
}

// Fido's state dir is never offered readable, and write access to / is
// no wider run.
func TestSandboxNeverOffersFidoStateOrRoot(t *testing.T) {
	b := newBoxed(t, SandboxAsk, BashRunOnce, BashWidenOnce)
	state := filepath.Join(b.home, ".local/state/fido")
	require.NoError(t, os.MkdirAll(state, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(state, "plan.json"), []byte("STATE"), 0o600))
	res := b.run(t, toolstest.Main, `cat "$HOME/.local/state/fido/plan.json"`)
	assert.NotContains(t, res.Content, "STATE")
	assert.Contains(t, res.Content, "Fido's own state and configuration and your runtime directory")
	assert.Len(t, b.asker.questions(), 1, "no widening question")
	if os.Getuid() == 0 {
		b.asker.answers = []string{BashRunOnce, BashWidenOnce}
		res = b.run(t, toolstest.Main, `touch /fido-sandbox-test-root-file`)
		assert.Contains(t, res.Content, "no wider run is offered for create /fido-sandbox-test-root-file")
		assert.Len(t, b.asker.questions(), 2)
		assert.NoFileExists(t, "/fido-sandbox-test-root-file")
	}
}
