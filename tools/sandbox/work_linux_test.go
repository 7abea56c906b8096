//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goModule writes a small module with a test into dir.
func goModule(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		"go.mod":            "module example.com/small\n\ngo 1.22\n",
		"add.go":            "package small\n\nfunc Add(a, b int) int { return a + b }\n",
		"add_test.go":       "package small\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
		"cmd/small/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/small\"\n)\n\nfunc main() { fmt.Println(small.Add(1, 1)) }\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// goEnv keeps the go command offline and local; the build cache is in
// the sandbox's temp dir, shared by the tests of this package run.
func (b *box) goEnv(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	b.env = append(b.env, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOCACHE="+sharedGoCache(t), "GOPATH="+filepath.Join(b.tmp, "gopath"))
}

var goCacheDir string

// sharedGoCache is one build cache for the package's tests (a cold cache
// costs a minute of compiling the standard library on a small machine).
func sharedGoCache(t *testing.T) string {
	if goCacheDir == "" {
		dir, err := os.MkdirTemp("", "fido-sandbox-gocache-")
		require.NoError(t, err)
		goCacheDir = dir
	}
	return goCacheDir
}

// A subagent's read-only sandbox: go test runs (the build cache is in the
// temp dir), and nothing in the workspace can be created.
func TestReadOnlySandboxRunsGoTestButCannotWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real build in the sandbox")
	}
	b := newBox(t)
	goModule(t, b.ws)
	b.goEnv(t)
	p := b.policy
	p.ReadOnly = true
	p.Writable = []string{sharedGoCache(t)}
	before := treeHash(t, b.ws)
	r := b.run(t, p, `go test ./... && echo TESTS-OK; touch newfile && echo CREATED; echo x >> add.go`)
	assert.Contains(t, r.out, "TESTS-OK")
	assert.NotContains(t, r.out, "CREATED")
	d, ok := r.denied("create", filepath.Join(b.ws, "newfile"))
	require.True(t, ok, r.report.String())
	assert.Contains(t, d.Rule, "read-only sandbox")
	_, ok = r.denied("write", filepath.Join(b.ws, "add.go"))
	assert.True(t, ok, r.report.String())
	assert.Equal(t, before, treeHash(t, b.ws), "the workspace is unchanged")
}

// The workspace's own work: go build, go test, git status and, with a
// rule allowing git writes, git commit; without it the commit is refused
// and the report says .git is read-only.
func TestWorkspaceWorkRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real build in the sandbox")
	}
	b := newBox(t)
	goModule(t, b.ws)
	b.goEnv(t)
	git := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir, c.Env = b.ws, append(os.Environ(), "HOME="+b.home)
		out, err := c.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "init")
	p := b.policy
	p.Writable = []string{sharedGoCache(t)}

	r := b.run(t, p, `go build -o sub/small ./cmd/small && sub/small && go test ./... && git status --short && echo WORK-OK`)
	assert.Contains(t, r.out, "2\n")
	assert.Contains(t, r.out, "WORK-OK")
	for _, d := range r.report.Denials {
		// git status may try to refresh the index; Go writes telemetry under HOME.
		if within(d.Path, b.ws) {
			assert.True(t, within(d.Path, filepath.Join(b.ws, ".git")), "refused in the workspace: %s", d)
		}
	}

	r = b.run(t, p, `echo more >> add.go && git commit -qam change && echo COMMITTED`)
	assert.NotContains(t, r.out, "COMMITTED")
	var gitDenial *Denial
	for _, d := range r.report.Denials {
		if strings.HasPrefix(d.Path, filepath.Join(b.ws, ".git")) {
			gitDenial = &d
			break
		}
	}
	require.NotNil(t, gitDenial, r.report.String())
	assert.Contains(t, gitDenial.Rule, ".git is read-only")

	p.GitWritable = true
	r = b.run(t, p, `git commit -qam change && git log --oneline | wc -l`)
	assert.Equal(t, "2\n", r.out)
	assert.Empty(t, r.report.Denials)
}

// npm ci installs from a local tarball without the network, its cache in
// the temp dir.
func TestNpmCIOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real build in the sandbox")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm")
	}
	b := newBox(t)
	dep := filepath.Join(b.outside, "dep")
	require.NoError(t, os.MkdirAll(dep, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dep, "package.json"), []byte(`{"name":"dep","version":"1.0.0","main":"index.js"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dep, "index.js"), []byte(`module.exports = 42;`), 0o644))
	npmEnv := append(os.Environ(), "HOME="+b.home, "npm_config_cache="+filepath.Join(b.outside, "npm-cache"), "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
	npm := func(dir string, args ...string) string {
		c := exec.Command("npm", args...)
		c.Dir, c.Env = dir, npmEnv
		out, err := c.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	tgz := npm(dep, "pack", "--silent")
	require.NoError(t, os.Rename(filepath.Join(dep, tgz), filepath.Join(b.ws, "sub", tgz)))
	app := filepath.Join(b.ws, "sub", "app")
	require.NoError(t, os.MkdirAll(app, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name":"app","version":"1.0.0","dependencies":{"dep":"file:../`+tgz+`"}}`), 0o644))
	npm(app, "install", "--offline")
	require.NoError(t, os.RemoveAll(filepath.Join(app, "node_modules")))

	b.env = append(b.env, "npm_config_cache="+filepath.Join(b.tmp, "npm-cache"), "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
	r := b.run(t, b.policy, `cd sub/app && npm ci --offline && node -e 'console.log("dep=" + require("dep"))'`)
	assert.Zero(t, r.exit)
	assert.Contains(t, r.out, "dep=42")
}

// On a system without Landlock (simulated) nothing runs: Command refuses
// with ErrUnavailable, and a helper that finds no Landlock refuses too,
// whatever the host believed.
func TestNoLandlockNeverRunsUnsandboxed(t *testing.T) {
	b := newBox(t)
	marker := filepath.Join(b.ws, "ran")

	// The host's probe (a fresh one: another helper path) sees ABI 0.
	exe, err := os.Executable()
	require.NoError(t, err)
	alias := filepath.Join(t.TempDir(), "helper")
	require.NoError(t, os.Symlink(exe, alias))
	t.Setenv(simulateABI0Env, "1")
	s := probeWith(alias)
	assert.False(t, s.Enforced)
	assert.Zero(t, s.LandlockABI)
	assert.Contains(t, s.Summary(), "not sandboxed")
	_, err = CommandWithHelper(context.Background(), alias, b.policy, "bash", "-c", "touch "+marker)
	require.ErrorIs(t, err, ErrUnavailable)

	// The helper checks for itself.
	c, err := Command(context.Background(), b.policy, "bash", "-c", "touch "+marker)
	require.NoError(t, err)
	c.Env = append(b.env, simulateABI0Env+"=1")
	err = c.Run()
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrUnavailable), "%v", err)
	_, statErr := os.Stat(marker)
	assert.True(t, os.IsNotExist(statErr), "the command did not run")
}

// Probe reports this machine's layers honestly.
func TestProbeReportsLayers(t *testing.T) {
	s := Probe()
	if landlockABI() == 0 {
		assert.False(t, s.Enforced)
		return
	}
	assert.True(t, s.Enforced, s.Reason)
	assert.Equal(t, landlockABI(), s.LandlockABI)
	assert.True(t, s.Seccomp)
	assert.NotEmpty(t, s.Bwrap)
	assert.Contains(t, s.Summary(), "Landlock ABI")
	t.Logf("%s; bubblewrap: %s", s.Summary(), s.Bwrap)
}
