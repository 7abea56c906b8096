package files

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// run invokes a tool through a registry, as the agent does.
func run(t testing.TB, ws *workspace.Workspace, name string, args any) tools.Result {
	t.Helper()
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		require.NoError(t, err)
		raw = b
	}
	return reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, name, raw)
}

func TestWorkspaceToolsRegister(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a/b.go": "x"})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	assert.Equal(t, []string{"find_files", "list_files", "mkdir", "patch", "read_file", "ripgrep", "rm", "rmdir"}, reg.Names())
	access := map[string]tools.Access{"find_files": tools.ReadOnly, "list_files": tools.ReadOnly, "read_file": tools.ReadOnly, "ripgrep": tools.ReadOnly,
		"patch": tools.Mutating, "mkdir": tools.Mutating, "rm": tools.Mutating, "rmdir": tools.Mutating}
	for _, tool := range reg.Tools() {
		assert.Equal(t, access[tool.Name()], tool.Access(), tool.Name())
		assert.Greater(t, len(tool.Description()), 100, tool.Name())
		var schema map[string]any
		require.NoError(t, json.Unmarshal(tool.Parameters(), &schema), tool.Name())
		_, ok := tool.(tools.CallSummarizer)
		assert.True(t, ok, "%s summarizes its calls", tool.Name())
	}
	// Subagents may read but never mutate.
	sub := tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent}, DelegationDepth: 1}
	res := reg.Invoke(t.Context(), sub, "rm", json.RawMessage(`{"path":"a/b.go"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "permission_denied")
	res = reg.Invoke(t.Context(), sub, "read_file", json.RawMessage(`{"path":"a/b.go"}`))
	assert.False(t, res.IsError, res.Content)
}

func TestCallSummaries(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	tests := []struct{ tool, args, want string }{
		{"read_file", `{"path":"src/x.go","seek":11,"limit":29}`, "src/x.go 12–40"},
		{"read_file", `{"path":"src/x.go"}`, "src/x.go"},
		{"ripgrep", `{"pattern":"func Parse","path":"src","glob":"*.go"}`, `"func Parse" in src (*.go)`},
		{"find_files", `{"pattern":"*.go"}`, `"*.go"`},
		{"list_files", `{"path":"src","recursive":true}`, "src/ (recursive)"},
		{"patch", `{"operations":[{"path":"a.go","content":""},{"path":"b.go","search":"x","replace":"y"}]}`, "2 ops: a.go, b.go"},
		{"rmdir", `{"path":"old"}`, "old"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, reg.SummarizeCall(tt.tool, json.RawMessage(tt.args)))
	}
}

func TestListRoot(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{".gitignore": "out/\n", "out/x": "", "src/a.go": "", ".git/HEAD": "", ".cache/x": "", "go.mod": "", "b.txt": ""})
	assert.Equal(t, ".gitignore\nb.txt\ngo.mod\nsrc/", ListRoot(ws, 10))
	got := ListRoot(ws, 2)
	assert.True(t, strings.HasSuffix(got, "… and 2 more"), got)
}

type namedTool struct{ name string }

func (n namedTool) Name() string                { return n.name }
func (n namedTool) Description() string         { return "d " + n.name }
func (n namedTool) Parameters() json.RawMessage { return json.RawMessage(`{"type": "object"}`) }
func (n namedTool) Access() tools.Access        { return tools.ReadOnly }
func (n namedTool) Run(context.Context, tools.Invocation, json.RawMessage) (tools.Result, error) {
	return tools.Result{Content: n.name}, nil
}

func TestWithKeepsBuiltinsFirstAndTheirBytes(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a/b.go": "x"})
	base, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	before, _ := json.Marshal(base.Specs())
	ext, err := base.With(namedTool{"mcp__z__b"}, namedTool{"mcp__a__c"})
	require.NoError(t, err)
	assert.Equal(t, append(base.Names(), "mcp__a__c", "mcp__z__b"), ext.Names())
	after, _ := json.Marshal(ext.Specs()[:len(base.Specs())])
	assert.Equal(t, string(before), string(after))
	whole, _ := json.Marshal(ext.Specs())
	assert.True(t, strings.HasPrefix(string(whole), strings.TrimSuffix(string(before), "]")), "the built-in specs are a byte prefix")
	assert.Equal(t, "mcp__a__c", ext.Invoke(t.Context(), tools.Invocation{}, "mcp__a__c", nil).Content)
	require.NoError(t, base.Intercept("read_file", func(ctx context.Context, _ tools.Invocation, _ json.RawMessage, run func(context.Context) (tools.Result, error)) (tools.Result, error) {
		res, err := run(ctx)
		res.Content += "\nintercepted"
		return res, err
	}))
	ext, err = base.With(namedTool{"mcp__a__c"})
	require.NoError(t, err)
	assert.Contains(t, ext.Invoke(t.Context(), tools.Invocation{}, "read_file", json.RawMessage(`{"path":"a/b.go"}`)).Content, "intercepted",
		"the built-in tools keep their interceptors")
	_, err = base.With(namedTool{"read_file"})
	assert.Error(t, err)
	same, err := base.With()
	require.NoError(t, err)
	assert.Same(t, base, same)
}

// Interceptors run around the tool (outermost last installed), after the
// guard: a subagent's refused call never reaches them.
func TestRegistryIntercept(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "one\n"})
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	var order []string
	wrap := func(tag string) tools.Interceptor {
		return func(ctx context.Context, inv tools.Invocation, args json.RawMessage, run func(context.Context) (tools.Result, error)) (tools.Result, error) {
			order = append(order, tag+" before")
			res, err := run(ctx)
			order = append(order, tag+" after")
			res.Content += "\n" + tag
			return res, err
		}
	}
	require.NoError(t, reg.Intercept("patch", wrap("inner")))
	require.NoError(t, reg.Intercept("patch", wrap("outer")))
	require.Error(t, reg.Intercept("nope", wrap("x")))

	res := reg.Invoke(t.Context(), tools.Invocation{}, "patch", json.RawMessage(`{"operations":[{"path":"a.txt","search":"one","replace":"two"}]}`))
	require.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasSuffix(res.Content, "\ninner\nouter"), res.Content)
	assert.Equal(t, []string{"outer before", "inner before", "inner after", "outer after"}, order)

	order = nil
	sub := tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent}, DelegationDepth: 1}
	res = reg.Invoke(t.Context(), sub, "patch", json.RawMessage(`{"operations":[{"path":"a.txt","search":"two","replace":"three"}]}`))
	assert.True(t, res.IsError)
	assert.Empty(t, order, "the guard refuses before any interceptor runs")
	res = reg.Invoke(t.Context(), tools.Invocation{}, "read_file", json.RawMessage(`{"path":"a.txt"}`))
	assert.NotContains(t, res.Content, "outer", "other tools are not intercepted")
}
