package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/fido-nvim/fido"

// heavyDeps are what the tool implementations bring in: the JavaScript
// engine and its regexp engine (tools/js), the HTTP stack (tools/web, the JS
// worker's fetch, MCP), and coregex, which an earlier search engine used and
// which must not come back into the core.
var heavyDeps = []string{
	"github.com/dop251/goja",
	"github.com/dlclark/regexp2",
	"github.com/coregx/coregex",
	"net/http",
}

// toolImplementations are the packages only this composition root may link.
var toolImplementations = []string{
	module + "/tools/files",
	module + "/tools/shell",
	module + "/tools/js",
	module + "/tools/web",
	module + "/tools/ask",
	module + "/tools/lsp",
	module + "/tools/mcp",
}

// The conversation core (plan, agent, delegate) links the tool contract and
// the workspace, never a tool implementation nor what those bring in: only
// the composition root does.
func TestCoreLinksNoToolImplementation(t *testing.T) {
	// The check sees what it must refuse: the host binary links it.
	root := goListDeps(t, module+"/cmd/fido")
	for _, p := range append([]string{"github.com/dop251/goja", "github.com/dlclark/regexp2", "net/http"}, toolImplementations...) {
		assert.NotEmpty(t, linked(root, p), "cmd/fido links %s", p)
	}

	for _, pkg := range []string{"plan", "agent", "delegate"} {
		deps := goListDeps(t, module+"/"+pkg)
		require.Contains(t, deps, module+"/tools", "%s links the tool contract", pkg)
		for _, p := range heavyDeps {
			assert.Empty(t, linked(deps, p), "%s must not link %s", pkg, p)
		}
		for _, p := range toolImplementations {
			assert.Empty(t, linked(deps, p), "%s must not link %s", pkg, p)
		}
	}
}

// The tool contract links no package of Fido's but tools/text (string
// formatting, standard library only): not the key redaction, which the
// composition root hands it (tools.SetRedactor), nor any implementation.
func TestContractLinksOnlyTheTextHelpers(t *testing.T) {
	for _, d := range goListDeps(t, module+"/tools") {
		if d == module || strings.HasPrefix(d, module+"/") {
			assert.Contains(t, []string{module + "/tools", module + "/tools/text"}, d, "the contract links %s", d)
		}
	}
	for _, d := range goListDeps(t, module+"/tools/text") {
		assert.False(t, strings.HasPrefix(d, module+"/") && d != module+"/tools/text", "tools/text links %s", d)
	}
}

// goListDeps lists every package pkg links (go list -deps), itself included.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list dependencies")
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.Fields(string(out))
}

// linked returns the packages of deps that are path or below it.
func linked(deps []string, path string) []string {
	var out []string
	for _, d := range deps {
		if d == path || strings.HasPrefix(d, path+"/") {
			out = append(out, d)
		}
	}
	return out
}
