package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/tools/sandbox"
)

// e2eCache is one XDG_CACHE_HOME for the sandboxed go commands of these
// tests, kept between runs: a cold build cache costs a compile of the
// standard library.
var e2eCache = sync.OnceValue(func() string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("fido-e2e-sandbox-cache-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		panic(err)
	}
	return dir
})

func requireEnforced(t *testing.T) {
	t.Helper()
	if s := sandbox.Probe(); !s.Enforced {
		t.Skip("no sandbox on this machine: " + s.Reason)
	}
}

func goModule(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		"go.mod":      "module example.com/small\n\ngo 1.22\n",
		"add.go":      "package small\n\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go": "package small\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
}

// Through the delegate tool with the scripted model: the subagent runs
// `go test` on a small module in a read-only sandbox (asked, as the main
// agent's commands are) and cannot create a file in the workspace; the
// parent gets only the delegate_result.
func TestE2ESubagentRunsGoTestInAReadOnlySandbox(t *testing.T) {
	requireEnforced(t)
	ws := t.TempDir()
	goModule(t, ws)
	f := startFidoEnv(t, "", []string{"XDG_CACHE_HOME=" + e2eCache(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod"}, ws)
	f.Lua(t, nil, `_G.asked = {}
vim.ui.select = function(items, opts, cb)
  table.insert(_G.asked, items)
  for i, it in ipairs(items) do
    if it == "Run once" then return cb(it, i) end
  end
  cb(nil, nil)
end`)
	answer := `{"status":"completed","summary":"The tests pass.","findings":[],"recommended_next_steps":[],"tests_to_run":["go test ./..."],"uncertainties":[]}`
	f.srv.Enqueue(
		llmtest.Reply().ToolCall("call_d", "delegate", `{"task":"run the tests and report"}`, 1).Finish("tool_calls"),
		llmtest.Reply().ToolCall("call_s", "bash_exec", `{"command":"go test ./... && touch created"}`, 1).Finish("tool_calls"),
		llmtest.Reply().Content(answer).Finish("stop"),
		llmtest.Text("The subagent ran the tests."),
	)
	require.NoError(t, f.Command("Fido do the tests pass?"))
	// A cold build cache compiles the standard library first.
	reqs, err := f.srv.WaitRequests(4, 3*time.Minute)
	require.NoError(t, err)
	msgs := reqs[2].Get("messages").Array()
	sub := msgs[len(msgs)-1].Get("content").String()
	assert.Contains(t, sub, "ok  \texample.com/small", "go test ran")
	assert.Contains(t, sub, "sandbox: read-only (writes only in its temp dir), no network")
	assert.Contains(t, sub, "created: read-only sandbox")
	assert.NoFileExists(t, filepath.Join(ws, "created"))
	assert.Contains(t, string(reqs[3].Body), "delegate_result")
	assert.NotContains(t, string(reqs[3].Body), "example.com/small", "the parent sees only the result")
	var asked int
	f.Lua(t, &asked, `return #_G.asked`)
	assert.Equal(t, 1, asked, "the subagent's command was asked once, with no widening after")
}

// A model-requested escape has nowhere to go: in auto mode a command that
// only stays in the workspace runs unasked, sandboxed, while one that
// reaches the network is asked.
func TestE2ESandboxAutoMode(t *testing.T) {
	requireEnforced(t)
	ws := t.TempDir()
	f := startFidoEnv(t, "", []string{"FIDO_SANDBOX=auto", "XDG_CACHE_HOME=" + e2eCache()}, ws)
	f.Lua(t, nil, `_G.asked = {}
vim.ui.select = function(items, opts, cb) table.insert(_G.asked, items); cb(nil, nil) end`)
	f.bashTurn(t, "a1", "mkdir -p out && echo made > out/x.txt && cat out/x.txt")
	assert.Contains(t, f.lastTool(t), "made")
	assert.Contains(t, f.lastTool(t), `run without asking: sandbox = "auto"`)
	var asked int
	f.Lua(t, &asked, `return #_G.asked`)
	assert.Equal(t, 0, asked)
	f.bashTurn(t, "a2", "curl -sS https://example.com/")
	f.Lua(t, &asked, `return #_G.asked`)
	assert.Equal(t, 1, asked, "a network command is asked")
	var line string
	f.Lua(t, &line, `return require("fido").statusline(200)`)
	assert.Contains(t, line, "sandbox auto")
}
