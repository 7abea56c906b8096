package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// quietUI is a headless front end that shows nothing: enough for building
// a backend without Neovim. A method not listed here panics when called.
type quietUI struct{ frontEnd }

func (quietUI) Info(agent.SessionInfo)         {}
func (quietUI) SetState(agent.TurnState)       {}
func (quietUI) Usage(_, _ agent.Usage)         {}
func (quietUI) Plan(*plan.Plan)                {}
func (quietUI) Notify(string, agent.Level)     {}
func (quietUI) Error(string)                   {}
func (quietUI) Notice(string)                  {}
func (quietUI) Subagent(*agent.SubagentStatus) {}

// builtinRegistry builds the registry the host really advertises, through
// the composition root, without Neovim and without MCP servers.
func builtinRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	configHome := t.TempDir() // no user mcp.json
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return configHome
		}
		return ""
	}
	cfg := agent.Config{Model: "test/model", APIKey: "test-key", BaseURL: "http://127.0.0.1:9", ContextTokens: 100000,
		StateRoot: t.TempDir(), ConfigDir: filepath.Join(configHome, "fido")}
	b, err := (&builder{cfg: cfg, root: t.TempDir(), getenv: getenv, logger: log.New(io.Discard, "", 0), front: quietUI{}}).build()
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b.Registry()
}

// specBytes encodes specs without HTML escaping, so the golden file shows
// the spec bytes exactly as the registry holds them.
func specBytes(t *testing.T, specs []tools.Spec) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(specs))
	return b.String()
}

// The catalog (every built-in tool's name, description and parameter schema,
// in advertised order) is the cached prompt prefix: it is the same bytes in
// every build and run, and any change to it shows in testdata/catalog.json
// (go test ./cmd/fido -run TestCatalogGolden -update rewrites it).
func TestCatalogGolden(t *testing.T) {
	reg := builtinRegistry(t)
	got := specBytes(t, reg.Specs())
	require.Equal(t, got, specBytes(t, builtinRegistry(t).Specs()), "a second composition advertises the same bytes")

	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, []byte(got), "", "  "))
	golden := filepath.Join("testdata", "catalog.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, pretty.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), pretty.String(), "the catalog changed; check the diff and rerun with -update")
}

// Every tool the host advertises takes its schema and description from its
// params struct and its constants, and they agree (tools.CheckContract): the
// struct's fields are the schema's properties with their JSON types and
// required-ness, every limit a description states is rendered from the
// constant the schema bounds with, and no template text is left.
func TestBuiltinToolContracts(t *testing.T) {
	reg := builtinRegistry(t)
	require.GreaterOrEqual(t, len(reg.Tools()), 20, "the whole built-in catalog")
	for _, tool := range reg.Tools() {
		t.Run(tool.Name(), func(t *testing.T) {
			assert.NoError(t, tools.CheckContract(tool))
		})
	}
}

// Every built-in tool names itself in front of the errors the model reads
// (tools.Define does it): an unknown argument is refused by each with
// "<name>: unknown argument …".
func TestBuiltinToolsNameThemselvesInErrors(t *testing.T) {
	reg := builtinRegistry(t)
	for _, tool := range reg.Tools() {
		t.Run(tool.Name(), func(t *testing.T) {
			res := reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, tool.Name(), json.RawMessage(`{"no_such_argument":1}`))
			require.True(t, res.IsError, res.Content)
			var body struct {
				Error json.RawMessage `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(res.Content), &body), res.Content)
			var msg string
			if json.Unmarshal(body.Error, &msg) != nil {
				var coded struct{ Message string }
				require.NoError(t, json.Unmarshal(body.Error, &coded), res.Content)
				msg = coded.Message
			}
			assert.True(t, strings.HasPrefix(msg, tool.Name()+`: unknown argument "no_such_argument"`), msg)
		})
	}
}

// The backend built in-process runs javascript_execute in a worker that is
// this test binary (os.Executable() js-worker), as bin/fido runs its own: the
// snippet's value comes back, and no copy of the test suite runs instead.
func TestInProcessBackendRunsJavaScriptInItsWorker(t *testing.T) {
	reg := builtinRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := reg.Invoke(ctx, tools.Invocation{}, "javascript_execute", json.RawMessage(`{"code":"6*7","timeout":20000}`))
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "42")
}
