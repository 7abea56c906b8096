package shell

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// escapeCase is one command line of issue 29's red team: run through the
// real bash_exec it touches OUT/M, a file outside the workspace, when
// bash runs it.
type escapeCase struct {
	name string
	// rule is the allow rule it ran under unasked ("" for none; several
	// are separated by ", ").
	rule string
	// line is the command; OUT stands for the outside directory.
	line string
	// needs are the programs it needs (the case is skipped without them).
	needs []string
	// setup prepares the workspace (ws) and the outside directory (out).
	setup func(t *testing.T, ws, out string)
}

func gitRepo(t *testing.T, ws, _ string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	// A change for git diff to write.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello again\n"), 0o644))
}

func outsideScripts(t *testing.T, _, out string) {
	t.Helper()
	toolstest.WriteTree(t, out, map[string]string{
		"evil.sh":    "touch " + out + "/M\n",
		"bin/helper": "#!/bin/sh\ntouch " + out + "/M\n",
		"run.sh":     "#!/bin/sh\ntouch " + out + "/M\n",
	})
	for _, p := range []string{"bin/helper", "run.sh"} {
		require.NoError(t, os.Chmod(filepath.Join(out, p), 0o755))
	}
}

func goModule(t *testing.T, ws, out string) {
	t.Helper()
	outsideScripts(t, ws, out)
	toolstest.WriteTree(t, ws, map[string]string{
		"go.mod":    "module example.com/x\n\ngo 1.21\n",
		"x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
	})
}

var escapeCases = []escapeCase{
	// Ran with no allow rule at all.
	{name: "arithmetic command", line: `x='a[$(touch OUT/M)]'; (( x ))`},
	{name: "declare -i", line: `declare -i z='a[$(touch OUT/M)]'`},
	{name: "typeset -i", line: `typeset -i z='a[$(touch OUT/M)]'`},
	{name: "test -v with a subscript", line: `[[ -v 'a[$(touch OUT/M)]' ]]`},
	{name: "test -eq on a variable", line: `x='a[$(touch OUT/M)]'; [[ $x -eq 0 ]]`},
	{name: "substring offset", line: `x=abc; y='a[$(touch OUT/M)]'; z=${x:$y}`},
	{name: "indirect expansion", line: `x='a[$(touch OUT/M)]'; z=${!x}`},
	{name: "prompt expansion", line: `x='$(touch OUT/M)'; z=${x@P}`},
	{name: "arithmetic expansion", line: `x='a[$(touch OUT/M)]'; z=$((x))`},
	{name: "let", line: `x='a[$(touch OUT/M)]'; let x`},
	{name: "env -S", line: `env -S'touch OUT/M'`},
	{name: "env --split-string", line: `env --split-string='touch OUT/M'`},
	{name: "env -i -S", line: `env -i -S'touch OUT/M'`},
	// Ran under a remembered rule.
	{name: "export GIT_CONFIG_*", rule: "git status", needs: []string{"git"}, setup: gitRepo,
		line: `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch OUT/M'; git status`},
	{name: "declare -x GIT_CONFIG_*", rule: "git status", needs: []string{"git"}, setup: gitRepo,
		line: `declare -x GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch OUT/M'; git status`},
	{name: "nameref to GIT_CONFIG_PARAMETERS", rule: "git status", needs: []string{"git"}, setup: gitRepo,
		line: `declare -n c=GIT_CONFIG_PARAMETERS; c="'core.fsmonitor=touch OUT/M'"; export GIT_CONFIG_PARAMETERS; git status`},
	{name: "PATH before a script", rule: "bash scripts/ci.sh", setup: outsideScripts,
		line: `PATH=OUT/bin:$PATH bash scripts/ci.sh`},
	{name: "BASH_ENV before a script", rule: "bash scripts/ci.sh", setup: outsideScripts,
		line: `BASH_ENV=OUT/evil.sh bash scripts/ci.sh`},
	{name: "rg --pre", rule: "rg", needs: []string{"rg"}, line: `rg --pre sh touch b.sh`},
	{name: "sed e command", rule: "sed", line: `sed -n '1e touch OUT/M' a.txt`},
	{name: "sed s///e", rule: "sed", line: `sed 's|.*|touch OUT/M|e' a.txt`},
	{name: "sed w outside", rule: "sed", line: `sed -n 'w OUT/M' a.txt`},
	{name: "awk system", rule: "awk", line: `awk 'BEGIN { system("touch OUT/M") }'`},
	{name: "sort -o outside", rule: "sort", line: `sort -o OUT/M a.txt`},
	{name: "git log --output", rule: "git log", needs: []string{"git"}, setup: gitRepo, line: `git log --output=OUT/M`},
	{name: "git diff --output", rule: "git diff", needs: []string{"git"}, setup: gitRepo, line: `git diff --output OUT/M`},
	{name: "git grep -O", rule: "git grep", needs: []string{"git"}, setup: gitRepo,
		line: `git grep --open-files-in-pager='touch OUT/M #' hello`},
	{name: "tar --checkpoint-action", rule: "tar",
		line: `tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch OUT/M' a.txt`},
	{name: "make --eval", rule: "make test", needs: []string{"make"}, line: `make test --eval '$(shell touch OUT/M)'`},
	{name: "go test -exec", rule: "go test", needs: []string{"go"}, setup: goModule, line: `go test -exec OUT/run.sh ./...`},
	// More of the escape table.
	{name: "curl -o outside", rule: "curl", needs: []string{"curl"}, line: `curl -so OUT/M file://$PWD/a.txt`},
	{name: "ssh ProxyCommand", rule: "ssh", needs: []string{"ssh"}, line: `ssh -o ProxyCommand='touch OUT/M' -o BatchMode=yes x true`},
	{name: "zip -TT", rule: "zip", needs: []string{"zip"}, line: `zip -q -T -TT 'touch OUT/M;:' z.zip a.txt`},
	{name: "find -fprint", rule: "find", line: `find . -maxdepth 0 -fprint OUT/M`},
	{name: "cp outside", rule: "cp", line: `cp a.txt OUT/M`},
	{name: "tee outside", rule: "tee", line: `tee OUT/M < a.txt`},
	{name: "dd of=", rule: "dd", line: `dd if=a.txt of=OUT/M status=none`},
	{name: "symlink out, then write through it", rule: "ln", line: `ln -s OUT link && ln -s ../a.txt link/M`},
	{name: "cd out", rule: "cd, ln", line: `cd OUT && ln -s x M`},
	{name: "python -c", rule: "python3", needs: []string{"python3"}, line: `python3 -c 'open("OUT/M", "w")'`},
	{name: "perl -e", rule: "perl", needs: []string{"perl"}, line: `perl -e 'open(F, ">OUT/M")'`},
	{name: "node -e", rule: "node", needs: []string{"node"}, line: `node -e 'require("fs").writeFileSync("OUT/M", "")'`},
}

// treeHash is a digest of every path, mode, link target and content under
// root.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := rel + " " + info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	}))
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// escapeTool is bash_exec in a fresh workspace (and outside directory)
// for c, answering every approval with answer, under rule (if any).
func escapeTool(t *testing.T, c escapeCase, rule, answer string) (*BashTool, *toolstest.Prompter, *workspace.Workspace, string, string) {
	t.Helper()
	ws, _ := toolstest.Workspace(t, map[string]string{
		"a.txt":         "hello\n",
		"scripts/ci.sh": "helper 2>/dev/null; true\n",
		"Makefile":      "test:\n\t@true\n",
	})
	out, err := os.MkdirTemp("", "fido-outside-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(out) })
	toolstest.WriteTree(t, ws.Root, map[string]string{"b.sh": "touch " + out + "/M\n"})
	if c.setup != nil {
		c.setup(t, ws.Root, out)
	}
	var config []permission.Rule
	for _, r := range strings.Split(rule, ", ") {
		if r != "" {
			config = append(config, permission.Rule{Effect: permission.Allow, Command: r})
		}
	}
	store, _ := permission.OpenStore("", config)
	fp := &toolstest.Prompter{Every: answer}
	tool := NewBashTool(ws, fp).WithPermissions(store)
	return tool, fp, ws, out, strings.ReplaceAll(c.line, "OUT", out)
}

// Every line asks, with no rule and with the rule it ran under; answered
// Deny, nothing outside the workspace changes.
func TestBashExecEscapesAskAndDenyChangesNothing(t *testing.T) {
	toolstest.Slow(t, "runs every line of the escape table through bash_exec")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, c := range escapeCases {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range c.needs {
				if _, err := exec.LookPath(p); err != nil {
					t.Skip(p + " is not installed")
				}
			}
			for _, rule := range []string{"", c.rule} {
				tool, fp, _, out, line := escapeTool(t, c, rule, BashDeny)
				before := treeHash(t, out)
				res := toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": line, "timeout": 60})
				assert.Equal(t, 1, fp.SelectCount(), "under %q the line must ask: %s", rule, res.Content)
				assert.True(t, res.IsError, res.Content)
				assert.Equal(t, before, treeHash(t, out), "under %q something outside the workspace changed", rule)
				assert.NoFileExists(t, filepath.Join(out, "M"))
				if rule == c.rule {
					break
				}
			}
		})
	}
}

// The same lines approved ("Run once") do touch the outside file: the test
// above would see it.
func TestBashExecEscapesReallyEscapeWhenRun(t *testing.T) {
	toolstest.Slow(t, "runs every line of the escape table through bash_exec")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, c := range escapeCases {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range c.needs {
				if _, err := exec.LookPath(p); err != nil {
					t.Skip(p + " is not installed")
				}
			}
			tool, _, _, out, line := escapeTool(t, c, "", BashRunOnce)
			before := treeHash(t, out)
			res := toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": line, "timeout": 60})
			assert.NotEqual(t, before, treeHash(t, out), "the line did not touch the outside: %s", res.Content)
			_, err := os.Lstat(filepath.Join(out, "M"))
			assert.NoError(t, err, res.Content)
		})
	}
}
