package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
)

func TestCatalogNamesOrderSchemasAndStableBytes(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{}, &fakePrompter{})
	list, problems := m.Catalog(context.Background())
	var names []string
	for _, tl := range list {
		names = append(names, tl.Name())
	}
	assert.Equal(t, []string{"mcp__t__fail", "mcp__t__lookup", "mcp__t__mixed", "mcp__t__slow", "mcp__t__write"}, names)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "t/broken left out: its input schema is invalid")

	byName := map[string]tools.Tool{}
	for _, tl := range list {
		byName[tl.Name()] = tl
	}
	assert.Equal(t, tools.ReadOnly, byName["mcp__t__lookup"].Access())
	assert.Equal(t, tools.Mutating, byName["mcp__t__write"].Access())
	assert.Equal(t, "[MCP server t] Looks a word up.", byName["mcp__t__lookup"].Description())
	assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
		string(byName["mcp__t__lookup"].Parameters()))

	// A second catalog (the next conversation) has the same bytes.
	again, _ := m.Catalog(context.Background())
	r1, err := tools.NewRegistry(list...)
	require.NoError(t, err)
	r2, err := tools.NewRegistry(again...)
	require.NoError(t, err)
	b1, _ := json.Marshal(r1.Specs())
	b2, _ := json.Marshal(r2.Specs())
	assert.Equal(t, string(b1), string(b2))
}

func TestToolNameSanitizedBoundedUnique(t *testing.T) {
	assert.Equal(t, "mcp__my_server__do_it-now", ToolName("my.server", "do it-now"))
	long := ToolName(strings.Repeat("s", 40), strings.Repeat("t", 40))
	assert.Len(t, long, MaxNameLen)
	taken := map[string]bool{long: true}
	u := uniqueName(long, taken)
	assert.Len(t, u, MaxNameLen)
	assert.True(t, strings.HasSuffix(u, "_2"))
	assert.NotEqual(t, long, u)
	assert.Regexp(t, `^[A-Za-z0-9_-]+$`, ToolName("ü/ß", "名前"))
}

func TestSchemaBytesRejectsNonObjects(t *testing.T) {
	_, err := schemaBytes(map[string]any{"type": "string"})
	assert.Error(t, err)
	_, err = schemaBytes(nil)
	assert.Error(t, err)
	_, err = schemaBytes(json.RawMessage(`{"type":"object","properties":{"x":{"pattern":"("}}}`))
	assert.ErrorContains(t, err, "pattern")
	_, err = schemaBytes(json.RawMessage(`{"type":"object","properties":{"type":{"type":"string","enum":[{"type":"x"}]}}}`))
	assert.NoError(t, err, "a property named type and data under enum are not type names")
	b, err := schemaBytes(map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"type": "string"}, "a": map[string]any{"type": "integer"}}})
	require.NoError(t, err)
	assert.Equal(t, `{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}`, string(b))
}

func invoke(t *testing.T, r *tools.Registry, inv tools.Invocation, name, args string) tools.Result {
	t.Helper()
	return r.Invoke(context.Background(), inv, name, json.RawMessage(args))
}

func TestEveryCallAsksUntilApproved(t *testing.T) {
	ts := newTestServer()
	p := &fakePrompter{answers: []string{ApproveOnce, ApproveDeny, "", ApproveSession}}
	m, _ := startTest(t, ts, Options{}, p)
	r := catalogRegistry(t, m)

	res := invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"go"}`)
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "found: go", res.Content)
	require.Equal(t, 1, p.asked())
	assert.Contains(t, p.prompts[0], `MCP t/lookup wants to run with {"text":"go"}`)
	assert.Equal(t, []string{ApproveDeny, ApproveDenyWhy, ApproveOnce, ApproveSession, ApproveWorkspace}, p.items[0], "least permissive first")

	res = invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"go"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, `"code":"declined"`)
	assert.Contains(t, res.Content, "the user denied the call")

	res = invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"go"}`) // dismissed = Deny
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "declined")

	res = invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"a"}`) // Always this session
	assert.False(t, res.IsError, res.Content)
	res = invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"b"}`)
	assert.Equal(t, "found: b", res.Content)
	assert.Equal(t, 4, p.asked(), "an approval for the session is not asked again")
}

func TestDenyWithReasonReachesTheModel(t *testing.T) {
	ts := newTestServer()
	p := &fakePrompter{answers: []string{ApproveDenyWhy}, input: "use the staging server"}
	m, _ := startTest(t, ts, Options{}, p)
	r := catalogRegistry(t, m)
	res := invoke(t, r, mainInv, "mcp__t__write", `{"text":"x"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "use the staging server")
}

func TestAutoApproveAndWorkspaceApproval(t *testing.T) {
	ts := newTestServer()
	p := &fakePrompter{}
	m, _ := startTest(t, ts, Options{AutoApprove: []string{"t/lookup", "other/*"}}, p)
	r := catalogRegistry(t, m)
	assert.Equal(t, "found: x", invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"x"}`).Content)
	assert.Equal(t, 0, p.asked())
	assert.True(t, invoke(t, r, mainInv, "mcp__t__write", `{"text":"x"}`).IsError, "t/write is not covered")
	assert.Equal(t, 1, p.asked())

	a := newApprovals("", []string{"t/*"})
	assert.True(t, a.allowed("t", "anything"))
	assert.False(t, a.allowed("u", "anything"))

	// Always for this tool in this workspace survives a restart of Fido.
	dir := t.TempDir()
	a = newApprovals(dir, nil)
	require.NoError(t, a.allowWorkspace("t", "write"))
	assert.True(t, newApprovals(dir, nil).allowed("t", "write"))
	assert.False(t, newApprovals(dir, nil).allowed("t", "lookup"))
}

func TestResults(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{AutoApprove: []string{"t/*"}}, &fakePrompter{})
	r := catalogRegistry(t, m)

	res := invoke(t, r, mainInv, "mcp__t__fail", `{"text":""}`)
	assert.True(t, res.IsError)
	assert.JSONEq(t, `{"error":"disk on fire"}`, res.Content)

	res = invoke(t, r, mainInv, "mcp__t__mixed", `{"text":""}`)
	assert.False(t, res.IsError)
	assert.Equal(t, "first\n[resource file:///notes.txt]\nnote body\n[image image/png, 5 bytes, not shown]\n[audio audio/wav, 3 bytes, not shown]\nlast", res.Content)
}

func TestBoundKeepsFirstAndLastParts(t *testing.T) {
	s := "HEAD" + strings.Repeat("x", 100000) + "TAIL"
	out := bound(s)
	assert.True(t, strings.HasPrefix(out, "HEAD"))
	assert.True(t, strings.HasSuffix(out, "TAIL"))
	assert.Contains(t, out, "characters left out of a 100008-character result")
	assert.Less(t, len(out), resultHeadRunes+resultTailRunes+200)
	assert.Equal(t, "short", bound("short"))
}

func TestTimeoutSendsCancelAndReturnsResult(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{AutoApprove: []string{"t/*"}, CallTimeout: 200 * time.Millisecond}, &fakePrompter{})
	r := catalogRegistry(t, m)
	start := time.Now()
	res := invoke(t, r, mainInv, "mcp__t__slow", `{"text":""}`)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, `"code":"timeout"`)
	select {
	case how := <-ts.cancelled:
		assert.Equal(t, "cancelled", how, "the server got notifications/cancelled")
	case <-time.After(3 * time.Second):
		t.Fatal("the server never heard of the cancellation")
	}
}

func TestCancelSendsCancel(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{AutoApprove: []string{"t/*"}}, &fakePrompter{})
	r := catalogRegistry(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	tl, _ := r.Lookup("mcp__t__slow")
	res, err := tl.Run(ctx, mainInv, json.RawMessage(`{"text":""}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, `"code":"cancelled"`)
	select {
	case how := <-ts.cancelled:
		assert.Equal(t, "cancelled", how)
	case <-time.After(3 * time.Second):
		t.Fatal("the server never heard of the cancellation")
	}
}

func TestSubagentMayOnlyCallApprovedReadOnlyTools(t *testing.T) {
	ts := newTestServer()
	p := &fakePrompter{answers: []string{ApproveSession, ApproveSession}}
	m, _ := startTest(t, ts, Options{}, p)
	r := catalogRegistry(t, m)

	res := invoke(t, r, subInv, "mcp__t__write", `{"text":"x"}`)
	assert.Contains(t, res.Content, "permission_denied")
	res = invoke(t, r, subInv, "mcp__t__lookup", `{"text":"x"}`)
	assert.Contains(t, res.Content, "permission_denied", "read-only but not approved yet")
	assert.Equal(t, 0, p.asked(), "a subagent never asks")

	// Once the user approved them in the main conversation:
	invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"x"}`)
	invoke(t, r, mainInv, "mcp__t__write", `{"text":"x"}`)
	assert.Equal(t, "found: y", invoke(t, r, subInv, "mcp__t__lookup", `{"text":"y"}`).Content)
	assert.Contains(t, invoke(t, r, subInv, "mcp__t__write", `{"text":"y"}`).Content, "permission_denied",
		"approved but not read-only")
}

func TestListChangedJoinsAtTheNextCatalog(t *testing.T) {
	ts := newTestServer()
	m, n := startTest(t, ts, Options{}, &fakePrompter{})
	first, _ := m.Catalog(context.Background())
	sdk.AddTool(ts.srv, &sdk.Tool{Name: "added", Description: "New."},
		func(context.Context, *sdk.CallToolRequest, echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	require.Eventually(t, func() bool { return strings.Contains(n.all(), "changed its tools") }, 3*time.Second, 10*time.Millisecond)
	assert.Contains(t, n.all(), "/mcp reload")
	assert.Contains(t, n.all(), "cached prompt prefix changes")
	assert.Len(t, first, 5, "the fixed catalog did not change")
	next, _ := m.Catalog(context.Background())
	assert.Len(t, next, 6)
	assert.Equal(t, "mcp__t__added", next[0].Name())
}

func TestCrashedServerRestartsAtTheNextCallAtMostThreeTimes(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{AutoApprove: []string{"t/*"}}, &fakePrompter{})
	r := catalogRegistry(t, m)
	for i := 1; i <= MaxRestarts; i++ {
		ts.crash()
		require.Eventually(t, func() bool { return m.Status()[0].State == StateCrashed }, 3*time.Second, 10*time.Millisecond)
		res := invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"again"}`)
		assert.Equal(t, "found: again", res.Content, "restart %d", i)
		assert.Equal(t, i, m.Status()[0].Restarts)
	}
	ts.crash()
	require.Eventually(t, func() bool { return m.Status()[0].State == StateFailed }, 3*time.Second, 10*time.Millisecond)
	res := invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"again"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "not restarted again")
	assert.Equal(t, []string{"t"}, m.Failed())
}

func TestCatalogWaitsAtMostTheStartTimeout(t *testing.T) {
	ts := newTestServer()
	block := make(chan struct{})
	defer close(block)
	n := &notes{}
	m := New(Config{
		Options: Options{StartTimeout: 300 * time.Millisecond, Servers: []ServerConfig{{Name: "late", Command: "x", Source: SourceSetup}}},
		Root:    t.TempDir(), StateDir: t.TempDir(), Notify: n.add,
		Transport: func(c ServerConfig) sdk.Transport {
			<-block // still starting
			return ts.transport(c)
		},
	})
	m.Start(nil)
	t.Cleanup(m.Close)
	start := time.Now()
	list, _ := m.Catalog(context.Background())
	assert.Empty(t, list)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	assert.Equal(t, StateStarting, m.Status()[0].State)
}

func TestLateServerIsAnnounced(t *testing.T) {
	ts := newTestServer()
	release := make(chan struct{})
	n := &notes{}
	m := New(Config{
		Options: Options{StartTimeout: 50 * time.Millisecond, Servers: []ServerConfig{{Name: "late", Command: "x", Source: SourceSetup}}},
		Root:    t.TempDir(), StateDir: t.TempDir(), Notify: n.add,
		Transport: func(c ServerConfig) sdk.Transport {
			<-release
			return ts.transport(c)
		},
	})
	m.Start(nil)
	t.Cleanup(m.Close)
	list, _ := m.Catalog(context.Background())
	assert.Empty(t, list)
	close(release)
	require.Eventually(t, func() bool { return strings.Contains(n.all(), "late is ready with 6 tools") }, 3*time.Second, 10*time.Millisecond)
	assert.Contains(t, n.all(), "join at /mcp reload or the next conversation")
	list, _ = m.Catalog(context.Background())
	assert.Len(t, list, 5)
}

func TestProjectServersWaitForTrust(t *testing.T) {
	ts := newTestServer()
	state := t.TempDir()
	project := Options{Servers: []ServerConfig{{Name: "proj", Command: "x", Source: SourceProject, File: ".mcp.json"}}}
	newM := func(p *fakePrompter) *Manager {
		m := New(Config{Options: project, Root: t.TempDir(), StateDir: state, Transport: ts.transport})
		m.Start(p)
		t.Cleanup(m.Close)
		return m
	}

	p := &fakePrompter{answers: []string{TrustLater}}
	m := newM(p)
	require.Eventually(t, func() bool { return p.asked() == 1 }, 3*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{TrustLater, TrustNever, TrustStart}, p.items[0], "least permissive first")
	assert.Contains(t, p.prompts[0], "proj (new)")
	require.Eventually(t, func() bool { return strings.Contains(m.Status()[0].Reason, "not trusted yet") }, 3*time.Second, 10*time.Millisecond)
	assert.Equal(t, StateUntrusted, m.Status()[0].State)

	p = &fakePrompter{answers: []string{TrustStart}}
	m = newM(p)
	require.Eventually(t, func() bool { return m.Status()[0].State == StateReady }, 3*time.Second, 10*time.Millisecond)

	p = &fakePrompter{}
	m = newM(p)
	require.Eventually(t, func() bool { return m.Status()[0].State == StateReady }, 3*time.Second, 10*time.Millisecond)
	assert.Equal(t, 0, p.asked(), "trusted once per workspace")

	require.NoError(t, m.ResetTrust())
	p = &fakePrompter{answers: []string{TrustNever}}
	m = newM(p)
	require.Eventually(t, func() bool { return m.Status()[0].State == StateNeverTrust }, 3*time.Second, 10*time.Millisecond)
	p = &fakePrompter{}
	m = newM(p)
	assert.Equal(t, StateNeverTrust, m.Status()[0].State)
	assert.Equal(t, 0, p.asked())
	_, err := os.Stat(filepath.Join(state, trustFile))
	assert.NoError(t, err)
}

func TestPromptsAsCommands(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{}, &fakePrompter{})
	m.Catalog(context.Background()) // waits for the server
	ps := m.Prompts()
	require.Len(t, ps, 1)
	assert.Equal(t, "/mcp:t:review", ps[0].Command())
	assert.Equal(t, []string{"file"}, ps[0].Args)
	text, err := m.GetPrompt(context.Background(), "/mcp:t:review", []string{"main.go"})
	require.NoError(t, err)
	assert.Equal(t, "Please review main.go", text)
	_, err = m.GetPrompt(context.Background(), "/mcp:t:review", nil)
	assert.ErrorContains(t, err, "/mcp:t:review needs file: /mcp:t:review <file>")
	_, err = m.GetPrompt(context.Background(), "/mcp:t:nope", nil)
	assert.ErrorContains(t, err, `no prompt "nope"`)
	_, err = m.GetPrompt(context.Background(), "/mcp:x:review", nil)
	assert.ErrorContains(t, err, `no MCP server "x"`)
	assert.Equal(t, []string{"t (setup): ready with 6 tools, 1 prompts"}, m.StatusLines())
}

// slowPrompter answers after a delay, as a user reading the question does.
type slowPrompter struct {
	fakePrompter
	delay time.Duration
}

func (p *slowPrompter) Select(ctx context.Context, prompt string, items []string) (int, error) {
	time.Sleep(p.delay)
	return p.fakePrompter.Select(ctx, prompt, items)
}

// The first request waits (bounded) for an open trust question, so a server
// trusted right at start is in the first conversation's catalog.
func TestFirstCatalogWaitsForTheTrustAnswer(t *testing.T) {
	ts := newTestServer()
	n := &notes{}
	m := New(Config{Options: Options{StartTimeout: 3 * time.Second, Servers: []ServerConfig{{Name: "proj", Command: "x", Source: SourceProject}}},
		Root: t.TempDir(), StateDir: t.TempDir(), Transport: ts.transport, Notify: n.add})
	m.Start(&slowPrompter{fakePrompter: fakePrompter{answers: []string{TrustStart}}, delay: 200 * time.Millisecond})
	t.Cleanup(m.Close)
	list, _ := m.Catalog(context.Background())
	assert.Len(t, list, 5)
	time.Sleep(100 * time.Millisecond)
	assert.NotContains(t, n.all(), "join at /mcp reload", "no late-server notice for a server in the catalog")
}

// An error the server answers (here: a tool it no longer has) is a plain
// tool error at once; the server stays ready.
func TestServerAnsweredErrorIsNotACrash(t *testing.T) {
	ts := newTestServer()
	m, _ := startTest(t, ts, Options{AutoApprove: []string{"t/*"}}, &fakePrompter{})
	r := catalogRegistry(t, m)
	ts.srv.RemoveTools("write")
	start := time.Now()
	res := invoke(t, r, mainInv, "mcp__t__write", `{"text":"x"}`)
	assert.Less(t, time.Since(start), 400*time.Millisecond)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "MCP server t:")
	assert.NotContains(t, res.Content, "crashed")
	assert.Equal(t, StateReady, m.Status()[0].State)
}

// The editor hears of every state change, the last report being the current
// state (here: a server that could not start).
func TestStateChangesAreReported(t *testing.T) {
	var mu sync.Mutex
	var seen [][]string
	var m *Manager
	m = New(Config{Options: Options{Servers: []ServerConfig{{Name: "nope", Command: filepath.Join(t.TempDir(), "missing"), Source: SourceSetup}}},
		Root: t.TempDir(), StateDir: t.TempDir(),
		OnState: func() {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, m.Failed())
		}})
	m.Start(nil)
	t.Cleanup(m.Close)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0 && len(seen[len(seen)-1]) == 1
	}, 3*time.Second, 10*time.Millisecond)
}

// With the command rules wired, MCP approvals are rules: "Always this
// session" adds `allow mcp t/lookup`, a workspace approval is saved in the
// rules file, and `deny mcp t` refuses every tool of the server unasked.
func TestApprovalsGoThroughTheCommandRules(t *testing.T) {
	ts := newTestServer()
	rules, notice := permission.OpenStore(filepath.Join(t.TempDir(), "permissions.json"),
		[]permission.Rule{{Effect: permission.Deny, Command: "mcp t/write"}})
	require.Empty(t, notice)
	p := &fakePrompter{answers: []string{ApproveSession, ApproveWorkspace}}
	n := &notes{}
	m := New(Config{Options: Options{Servers: []ServerConfig{{Name: "t", Command: "unused", Source: SourceSetup}}},
		Root: t.TempDir(), StateDir: t.TempDir(), Transport: ts.transport, Notify: n.add, Rules: rules,
		Logf: func(f string, a ...any) { t.Logf(f, a...) }})
	m.Start(p)
	t.Cleanup(m.Close)
	r := catalogRegistry(t, m)

	res := invoke(t, r, mainInv, "mcp__t__write", `{"text":"x"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, `deny mcp t/write`)
	assert.Equal(t, 0, p.asked(), "a deny rule refuses without asking")

	require.False(t, invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"a"}`).IsError)
	require.False(t, invoke(t, r, mainInv, "mcp__t__lookup", `{"text":"b"}`).IsError)
	assert.Equal(t, 1, p.asked())
	var got []string
	for _, rule := range rules.All() {
		got = append(got, rule.String()+" ("+string(rule.Origin)+")")
	}
	assert.Contains(t, got, "allow mcp t/lookup (session)")
}

// askPrompter is a prompter that shows details (as Fido's editor does): it
// records each Question and answers from the script.
type askPrompter struct {
	fakePrompter
	questions []tools.Question
}

func (p *askPrompter) Ask(ctx context.Context, q tools.Question) (int, error) {
	p.mu.Lock()
	p.questions = append(p.questions, q)
	p.mu.Unlock()
	return p.Select(ctx, q.Prompt, q.Items)
}

// MCP questions are approvals like bash_exec's: marked as such (the
// statusline says "waiting for approval"), least permissive choice first and
// safe, the whole arguments and the servers' commands shown in full.
func TestMCPQuestionsAreApprovalsWithTheSafeChoiceFirst(t *testing.T) {
	ts := newTestServer()
	p := &askPrompter{fakePrompter: fakePrompter{answers: []string{ApproveOnce}}}
	m, _ := startTest(t, ts, Options{}, p)
	r := catalogRegistry(t, m)
	inv := mainInv
	inv.CallID = "call-7"
	res := invoke(t, r, inv, "mcp__t__lookup", `{"text":"go"}`)
	require.False(t, res.IsError, res.Content)
	require.Len(t, p.questions, 1)
	q := p.questions[0]
	assert.True(t, q.Approval)
	assert.Equal(t, 0, q.Safe)
	assert.Equal(t, ApproveDeny, q.Items[q.Safe])
	assert.Equal(t, "Run MCP tool t/lookup? (arguments shown above)", q.Prompt)
	assert.Equal(t, "{\n  \"text\": \"go\"\n}", q.Detail)
	assert.Equal(t, "json", q.DetailFiletype)
	assert.Equal(t, "call-7", q.CallID)

	tp := &askPrompter{fakePrompter: fakePrompter{answers: []string{TrustLater}}}
	root := t.TempDir()
	tm := New(Config{Options: Options{Servers: []ServerConfig{
		{Name: "proj", Command: "x", Args: []string{"--port", "80 81", "it's"}, Env: map[string]string{"TOKEN": "secret", "A": "1"},
			Source: SourceProject, File: ".mcp.json"},
		{Name: "web", URL: "https://mcp.example/x", Source: SourceProject, File: ".mcp.json"},
	}}, Root: root, StateDir: t.TempDir(), Transport: ts.transport})
	tm.Start(tp)
	t.Cleanup(tm.Close)
	require.Eventually(t, func() bool { return tp.asked() == 1 }, 3*time.Second, 10*time.Millisecond)
	tp.mu.Lock()
	tq := tp.questions[0]
	tp.mu.Unlock()
	assert.True(t, tq.Approval)
	assert.Equal(t, TrustLater, tq.Items[tq.Safe])
	// The whole command line, quoted as sh would need it, its directory and
	// the names (never the values) of its variables.
	assert.Equal(t, "proj (new)\n  runs: x --port '80 81' 'it'\\''s'\n  in:   the workspace root\n  sandbox: "+sandboxLine(nil)+"\n  env:  A=1\n        TOKEN=‹hidden, 6 characters›\nweb (new)\n  url:  https://mcp.example/x", tq.Detail)
	assert.NotContains(t, tq.Detail, "secret")
	assert.Contains(t, tq.DetailInfo, "start timeout 5s")
}

// A description is the server's name and the tool's text, at most
// MaxDescriptionRunes runes (counted as runes, cut with "…"); a tool without
// one falls back to its title, then to a placeholder.
func TestDescriptionNamesTheServerAndIsBounded(t *testing.T) {
	assert.Equal(t, "[MCP server s] Looks up.", describe("s", &sdk.Tool{Description: "  Looks up.\n"}))
	assert.Equal(t, "[MCP server s] Lookup", describe("s", &sdk.Tool{Title: "Lookup"}))
	assert.Equal(t, "[MCP server s] (no description)", describe("s", &sdk.Tool{}))

	exact := strings.Repeat("é", MaxDescriptionRunes-len("[MCP server s] "))
	assert.Equal(t, "[MCP server s] "+exact, describe("s", &sdk.Tool{Description: exact}), "at the limit: kept whole")

	long := describe("s", &sdk.Tool{Description: strings.Repeat("ü", 5000)})
	assert.Equal(t, MaxDescriptionRunes, utf8.RuneCountInString(long))
	assert.True(t, utf8.ValidString(long), "cut between runes, never inside one")
	assert.True(t, strings.HasPrefix(long, "[MCP server s] ü"))
	assert.True(t, strings.HasSuffix(long, "ü…"))
}
