package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools"
)

// testServer is an in-process MCP server built with the same SDK: a
// read-only tool, a writing tool, an erroring tool, a slow tool, a tool with
// mixed content and one with an invalid schema.
type testServer struct {
	srv       *sdk.Server
	cancelled chan string // the slow tool reports how its call ended
	mu        sync.Mutex
	sessions  []*sdk.ServerSession
}

type echoIn struct {
	Text string `json:"text"`
}

func newTestServer() *testServer {
	ts := &testServer{cancelled: make(chan string, 4)}
	ts.srv = sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1.0.0"}, &sdk.ServerOptions{})
	sdk.AddTool(ts.srv, &sdk.Tool{Name: "lookup", Description: "Looks a word up.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(ts.srv, &sdk.Tool{Name: "write", Description: "Writes something."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wrote " + in.Text}}}, nil, nil
		})
	sdk.AddTool(ts.srv, &sdk.Tool{Name: "fail", Description: "Always fails.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk on fire"}}}, nil, nil
		})
	sdk.AddTool(ts.srv, &sdk.Tool{Name: "slow", Description: "Takes its time.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ echoIn) (*sdk.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				ts.cancelled <- "cancelled"
				return nil, nil, ctx.Err()
			case <-time.After(10 * time.Second):
				ts.cancelled <- "finished"
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
			}
		})
	sdk.AddTool(ts.srv, &sdk.Tool{Name: "mixed", Description: "Returns every kind of content."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "first"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "note body"}},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("12345")},
				&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("123")},
				&sdk.TextContent{Text: "last"},
			}}, nil, nil
		})
	ts.srv.AddTool(&sdk.Tool{Name: "broken", Description: "Has an invalid schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"no-such-type"}}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	ts.srv.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a file", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Please review " + req.Params.Arguments["file"]}}}}, nil
		})
	return ts
}

// transport connects a client to the in-process server.
func (ts *testServer) transport(ServerConfig) sdk.Transport {
	ct, st := sdk.NewInMemoryTransports()
	ss, err := ts.srv.Connect(context.Background(), st, nil)
	if err == nil {
		ts.mu.Lock()
		ts.sessions = append(ts.sessions, ss)
		ts.mu.Unlock()
	}
	return ct
}

// crash ends the server side of every connection, as an exiting server would.
func (ts *testServer) crash() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, s := range ts.sessions {
		_ = s.Close()
	}
	ts.sessions = nil
}

// fakePrompter answers selects from a script and records the prompts.
type fakePrompter struct {
	mu      sync.Mutex
	answers []string // item text to pick; "" dismisses
	input   string
	prompts []string
	items   [][]string
}

func (p *fakePrompter) Select(_ context.Context, prompt string, items []string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompts = append(p.prompts, prompt)
	p.items = append(p.items, items)
	if len(p.answers) == 0 {
		return -1, nil
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	for i, it := range items {
		if it == a {
			return i, nil
		}
	}
	return -1, nil
}

func (p *fakePrompter) Input(context.Context, string, string) (string, bool, error) {
	return p.input, p.input != "", nil
}

func (p *fakePrompter) asked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.prompts)
}

type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(msg string, _ bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, msg)
}

func (n *notes) all() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.lines, "\n")
}

var mainInv = tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}}
var subInv = tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent, AgentID: "sub-1", ParentRole: tools.RoleMain}, DelegationDepth: 1}

func startTest(t *testing.T, ts *testServer, opts Options, p tools.Prompter) (*Manager, *notes) {
	t.Helper()
	n := &notes{}
	if len(opts.Servers) == 0 {
		opts.Servers = []ServerConfig{{Name: "t", Command: "unused", Source: SourceSetup}}
	}
	m := New(Config{Options: opts, Root: t.TempDir(), StateDir: t.TempDir(), Transport: ts.transport, Notify: n.add,
		Logf: func(f string, a ...any) { t.Logf(f, a...) }})
	m.Start(p)
	t.Cleanup(m.Close)
	return m, n
}

func catalogRegistry(t *testing.T, m *Manager) *tools.Registry {
	t.Helper()
	ts, _ := m.Catalog(context.Background())
	r, err := tools.NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
