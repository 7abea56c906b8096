package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// Attack tests: a hostile repository (FIFOs, devices, symlinks to /dev/zero,
// huge sparse files) and a racing process swapping path components. Each is
// bounded: toolstest.Bounded fails the test when the call takes longer than its time
// or the heap grows past 512 MiB (it then stops the process, since a runaway
// read cannot be interrupted).

func mkfifo(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// hostileWorkspaces are clones a user might open: every file Fido reads on
// its own (ignore files) is something that must not be read.
func hostileWorkspaces(t *testing.T) map[string]func(root string) {
	return map[string]func(root string){
		"gitignore symlink to /dev/zero": func(root string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, ".gitignore")))
		},
		"info/exclude symlink to /dev/zero": func(root string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, ".git/info/exclude")))
		},
		"nested gitignore symlink to /dev/zero": func(root string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "src/.gitignore")))
		},
		"gitignore FIFO": func(root string) { mkfifo(t, filepath.Join(root, ".gitignore")) },
		"nested gitignore FIFO": func(root string) {
			mkfifo(t, filepath.Join(root, "src/.gitignore"))
		},
		"info/exclude FIFO": func(root string) { mkfifo(t, filepath.Join(root, ".git/info/exclude")) },
		"huge sparse gitignore": func(root string) {
			f, err := os.Create(filepath.Join(root, ".gitignore"))
			require.NoError(t, err)
			_, err = f.WriteString("*.log\n")
			require.NoError(t, err)
			require.NoError(t, f.Truncate(8<<30))
			require.NoError(t, f.Close())
		},
	}
}

func TestHostileIgnoreFilesAreSkipped(t *testing.T) {
	for name, plant := range hostileWorkspaces(t) {
		t.Run(name, func(t *testing.T) {
			ws, _ := toolstest.Workspace(t, map[string]string{
				"src/main.go": "package main // needle\n", "README": "needle\n", ".git/info/": "",
			})
			plant(ws.Root)
			var logs []string
			var mu sync.Mutex
			ws.Sandbox.Logf = func(f string, a ...any) {
				mu.Lock()
				defer mu.Unlock()
				logs = append(logs, fmt.Sprintf(f, a...))
			}
			var listing string
			var results []tools.Result
			toolstest.Bounded(t, 5*time.Second, "session start and walks", func() {
				listing = ListRoot(ws, 50) // what session start does
				results = []tools.Result{
					run(t, ws, "list_files", map[string]any{"path": ".", "recursive": true}),
					run(t, ws, "find_files", map[string]any{"pattern": "**/*.go"}),
					run(t, ws, "ripgrep", map[string]any{"pattern": "needle"}),
					run(t, ws, "list_files", map[string]any{"path": "src"}),
				}
			})
			assert.Contains(t, listing, "src/")
			for _, r := range results {
				assert.False(t, r.IsError, r.Content)
			}
			assert.Contains(t, results[2].Content, "src/main.go")
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, logs, "a skipped ignore file is logged")
			seen := map[string]bool{}
			for _, l := range logs {
				assert.False(t, seen[l], "logged once: %s", l)
				seen[l] = true
				assert.Regexp(t, `^skipped .*(gitignore|exclude): `, l)
			}
		})
	}
}

// A nested .gitignore that is a symlink inside the workspace still applies,
// the same way whether a walk starts above it or in its directory.
func TestSymlinkedGitignoreInsideStillApplies(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"rules/ignore": "*.log\n", "src/a.go": "x", "src/b.log": "x"})
	require.NoError(t, os.Symlink("../rules/ignore", filepath.Join(ws.Root, "src/.gitignore")))
	var logged []string
	ws.Sandbox.Logf = func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	for _, dir := range []string{".", "src"} {
		res := run(t, ws, "list_files", map[string]any{"path": dir, "recursive": true})
		require.False(t, res.IsError, res.Content)
		assert.Contains(t, res.Content, "a.go", dir)
		assert.NotContains(t, res.Content, "b.log", dir)
	}
	assert.Empty(t, logged)
}

func TestReadFileRefusesFIFOAndDevice(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "a\n"})
	mkfifo(t, filepath.Join(ws.Root, "fifo"))
	var res, rg tools.Result
	toolstest.Bounded(t, 5*time.Second, "read_file and ripgrep of a FIFO", func() {
		res = run(t, ws, "read_file", map[string]any{"path": "fifo"})
		rg = run(t, ws, "ripgrep", map[string]any{"pattern": "x", "path": "fifo"})
	})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "fifo is not a regular file (it is a FIFO)")
	assert.NotContains(t, rg.Content, "fifo:", "nothing read from the FIFO")

	// A character device inside the workspace (needs root to create).
	dev := filepath.Join(ws.Root, "zero")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
		t.Logf("mknod: %v; device case not run", err)
		return
	}
	toolstest.Bounded(t, 5*time.Second, "read_file and ripgrep of a device", func() {
		res = run(t, ws, "read_file", map[string]any{"path": "zero"})
		rg = run(t, ws, "ripgrep", map[string]any{"pattern": "x", "path": "zero"})
	})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "zero is not a regular file (it is a character device)")
	assert.NotContains(t, rg.Content, "zero:")
}

func TestReadFileSparseHugeFileHonoursCancel(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	p := filepath.Join(ws.Root, "sparse.txt")
	f, err := os.Create(p)
	require.NoError(t, err)
	// Text first (so it is not taken for binary), then an 8 GiB hole.
	_, err = f.WriteString(strings.Repeat("text line\n", 2000))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(8<<30))
	require.NoError(t, f.Close())

	// As on a file system that cannot report holes: all 8 GiB are read.
	saved := firstHole
	firstHole = func(*os.File, int64) (int64, bool) { return 0, false }
	defer func() { firstHole = saved }()
	tool := newReadFile(ws)
	ctx, cancel := context.WithCancel(context.Background())
	args, _ := json.Marshal(map[string]any{"path": "sparse.txt"})
	var runErr error
	var res tools.Result
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	toolstest.Bounded(t, 3*time.Second, "read_file of an 8 GiB sparse file after cancel", func() {
		res, runErr = tool.Run(ctx, tools.Invocation{}, args)
	})
	// Every tool checks the whole file for NUL bytes, so the hole (zeros)
	// makes it binary as soon as the read reaches it; a read still running
	// when the call is cancelled ends within one buffer (confined.Reader).
	if runErr == nil {
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "binary file")
	} else {
		assert.ErrorIs(t, runErr, context.Canceled)
	}
	assert.Less(t, time.Since(start), 1500*time.Millisecond, "an 8 GiB file never holds the call")
}

func TestReadFileSparseHugeFileIsBinaryAtOnce(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	f, err := os.Create(filepath.Join(ws.Root, "sparse.txt"))
	require.NoError(t, err)
	_, err = f.WriteString(strings.Repeat("text line\n", 2000))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(8<<30))
	require.NoError(t, f.Close())
	if fh, err := os.Open(filepath.Join(ws.Root, "sparse.txt")); err == nil {
		off, err := fh.Seek(0, 4) // SEEK_HOLE
		_ = fh.Close()
		if err != nil || off >= 8<<30 {
			t.Skip("this file system does not report holes")
		}
	}
	var res tools.Result
	start := time.Now()
	toolstest.Bounded(t, 3*time.Second, "read_file of an 8 GiB sparse file", func() {
		res = run(t, ws, "read_file", map[string]any{"path": "sparse.txt"})
	})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "is a binary file (a sparse file of 8589934592 bytes")
	assert.Less(t, time.Since(start), time.Second)
}

func TestMutationsRefuseGitDir(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{
		".git/config": "[core]\n", ".git/hooks/": "", "sub/.Git/x": "", "keep.txt": "k\n",
	})
	require.NoError(t, os.Symlink(".git", filepath.Join(ws.Root, "gitlink")))
	require.NoError(t, os.Symlink(".git/config", filepath.Join(ws.Root, "cfglink")))
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n"}}}},
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".git/config", "search": "[core]", "replace": "[core]\n\tfsmonitor = x"}}}},
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".GIT/hooks/pre-commit", "content": "#!/bin/sh\n"}}}},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "gitlink/config", "content": "x"}}}},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "cfglink", "content": "x"}}}},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "keep.txt", "content": "ok\n"}, {"path": "sub/.Git/x", "content": "x"}}}},
		{"rm", map[string]any{"path": ".git/config"}},
		{"rm", map[string]any{"path": "gitlink/config"}},
		{"rmdir", map[string]any{"path": ".git"}},
		{"rmdir", map[string]any{"path": ".git/hooks"}},
		{"mkdir", map[string]any{"path": ".git/hooks/x"}},
		{"mkdir", map[string]any{"path": "gitlink/info"}},
	}
	for _, c := range cases {
		res := run(t, ws, c.tool, c.args)
		assert.True(t, res.IsError, "%s %v: %s", c.tool, c.args, res.Content)
		assert.Contains(t, res.Content, "inside .git/", "%s %v", c.tool, c.args)
	}
	assert.Equal(t, "[core]\n", toolstest.ReadFile(t, ws, ".git/config"))
	assert.Equal(t, "k\n", toolstest.ReadFile(t, ws, "keep.txt"), "a patch with a .git path changes nothing")
	assert.DirExists(t, filepath.Join(ws.Root, ".git/hooks"))
	assert.NoDirExists(t, filepath.Join(ws.Root, ".git/hooks/x"))
	assert.NoDirExists(t, filepath.Join(ws.Root, ".git/info"))
	// A name that merely contains .git is fine.
	res := run(t, ws, "patch", map[string]any{"operations": []map[string]any{{"path": "a.git/x.gitignore", "content": "x\n"}}})
	assert.False(t, res.IsError, res.Content)
}

func TestMkdirFailureLeavesNothing(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"keep/": ""})
	// Over-long: thousands of nested directories would be created one by one.
	long := strings.Repeat("a/", 3000) + "z"
	res := run(t, ws, "mkdir", map[string]any{"path": long})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "too long")
	assert.Less(t, len(res.Content), 600, "the path is not echoed whole")
	assert.NoDirExists(t, filepath.Join(ws.Root, "a"))

	// Fails part way (a component longer than the file system allows): the
	// directories created before it are removed again.
	res = run(t, ws, "mkdir", map[string]any{"path": "x/y/" + strings.Repeat("n", 300) + "/z"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "nothing was created")
	assert.NoDirExists(t, filepath.Join(ws.Root, "x"))
	assert.DirExists(t, filepath.Join(ws.Root, "keep"))
	assert.Empty(t, ws.Undo.Entries())
}

// An undo.json that is a FIFO or a symlink to /dev/zero must not hang or
// exhaust session start: the log starts empty and says why.
func TestOpenUndoLogRefusesFIFOAndDevZero(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "undo.json")
			if err := plant(p); err != nil {
				t.Skipf("%s: %v", name, err)
			}
			var u *workspace.UndoLog
			var err error
			toolstest.Bounded(t, 5*time.Second, "OpenUndoLog", func() { u, err = workspace.OpenUndoLog(p) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), "starting with an empty log")
			require.NotNil(t, u)
			assert.Empty(t, u.Entries())
		})
	}
}

// TestStaticEscapesThroughEveryTool points every workspace tool at every
// path of the sandbox fixture that leads outside (symlinks absolute,
// relative, chained, dangling, "..", absolute paths): nothing outside may be
// read, listed, written, created or deleted.
func TestStaticEscapesThroughEveryTool(t *testing.T) {
	const marker = "OUTSIDE-CONTENT"
	paths := []string{
		"link-out-file", "link-out-dir", "link-out-dir/inner.txt", "link-out-dir/new.txt",
		"link-out-dir/deeper/new.txt", "link-out-rel/secret.txt", "link-out-rel/dir", "dangling-out",
		"chain/secret.txt", "chain/dir", "src/up/link-out-file", "src/up/link-out-dir/x",
		"../outside/secret.txt", "../outside/dir", "<outside>/secret.txt", "<outside>",
	}
	attempts, escapes := 0, 0
	for _, p := range paths {
		// A fresh fixture per path: removing a link (allowed, it lies
		// inside) must not make the next attempts meaningless.
		root, outside := toolstest.SymlinkFixture(t)
		require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(marker+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(outside, "dir/inner.txt"), []byte(marker+"\n"), 0o644))
		ws, err := workspace.New(root, nil, nil)
		require.NoError(t, err)
		p = strings.ReplaceAll(p, "<outside>", outside)
		snapshot := func() string {
			var b strings.Builder
			_ = filepath.Walk(outside, func(p string, fi os.FileInfo, err error) error {
				if err == nil {
					data, _ := os.ReadFile(p)
					fmt.Fprintf(&b, "%s %v %q\n", p, fi.Mode(), data)
				}
				return nil
			})
			return b.String()
		}
		before := snapshot()
		calls := []struct {
			tool string
			args any
		}{
			{"read_file", map[string]any{"path": p}},
			{"ripgrep", map[string]any{"pattern": marker, "path": p}},
			{"list_files", map[string]any{"path": p, "recursive": true}},
			{"find_files", map[string]any{"pattern": "**", "path": p}},
			{"patch", map[string]any{"operations": []map[string]any{{"path": p, "content": "pwned\n"}}}},
			{"patch", map[string]any{"operations": []map[string]any{{"path": p, "search": marker, "replace": "pwned"}}}},
			{"patch", map[string]any{"operations": []map[string]any{{"path": p + "/new.txt", "content": "pwned\n"}}}},
			{"mkdir", map[string]any{"path": p + "/made"}},
			{"rm", map[string]any{"path": p + "/inner.txt"}},
			{"rmdir", map[string]any{"path": p + "/dir"}},
			{"rm", map[string]any{"path": p}},
			{"rmdir", map[string]any{"path": p}},
		}
		for _, c := range calls {
			attempts++
			res := run(t, ws, c.tool, c.args)
			asked, _ := json.Marshal(c.args)
			leaked := strings.Contains(res.Content, marker) ||
				(!strings.Contains(string(asked), "inner.txt") && strings.Contains(res.Content, "inner.txt"))
			if after := snapshot(); after != before || leaked {
				escapes++
				t.Errorf("%s %v escaped: %s", c.tool, c.args, res.Content)
				before = after
			}
		}
	}
	t.Logf("%d static escape attempts, %d escapes", attempts, escapes)
}

// Fido's own tools never write the files that can start programs later
// without a question (.mcp.json, .fido/, .claude/, .vscode/, .envrc,
// Neovim's exrc files, git's files), in edits = "auto" and under review
// alike, through any spelling or symlink; the model is told why and what to
// do instead. A directory holding one is not deleted either.
func TestMutationsRefuseFilesThatStartPrograms(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{
		".mcp.json": "{}\n", ".vscode/tasks.json": "{}\n", ".claude/settings.json": "{}\n", ".fido/commands/x.md": "x\n",
		"sub/.envrc": "", "pkg/.vscode/settings.json": "{}\n", "keep.txt": "k\n", "docs/a.md": "a\n",
	})
	require.NoError(t, os.Symlink(".vscode", filepath.Join(ws.Root, "editor")))
	require.NoError(t, os.Symlink(".mcp.json", filepath.Join(ws.Root, "servers.json")))
	evil := `{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch M"]}}}`
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".mcp.json", "content": evil}}}, ".mcp.json is protected: it names the MCP servers"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "./sub/../.MCP.json", "search": "{}", "replace": evil}}}, "is protected"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "servers.json", "content": evil}}}, "is protected"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "keep.txt", "content": "changed\n"}, {"path": ".vscode/tasks.json", "content": "{}"}}}, "editor tasks and settings"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "editor/settings.json", "content": "{}"}}}, "is protected"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".claude/settings.json", "content": `{"hooks":{}}`}}}, "hooks run commands"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".fido/commands/y.md", "content": "y"}}}, "Fido's project commands"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "sub/.envrc", "content": "touch M\n"}}}, "direnv runs it"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": ".nvim.lua", "content": "os.execute('touch M')\n"}}}, "'exrc'"},
		{"patch", map[string]any{"operations": []map[string]any{{"path": "pkg/.vscode/settings.json", "content": "{}"}}}, "is protected"},
		{"mkdir", map[string]any{"path": ".claude/hooks"}, "is protected"},
		{"mkdir", map[string]any{"path": "new/.vscode"}, "is protected"},
		{"rm", map[string]any{"path": ".mcp.json"}, "is protected"},
		{"rm", map[string]any{"path": "editor/tasks.json"}, "is protected"},
		{"rmdir", map[string]any{"path": ".fido"}, "is protected"},
		{"rmdir", map[string]any{"path": "pkg"}, "rmdir: pkg/ cannot be deleted: pkg/.vscode is protected"},
	}
	for _, review := range []bool{false, true} {
		for _, c := range cases {
			var res tools.Result
			if review {
				g := &fakeGate{decision: tools.EditDecision{Apply: true}}
				res = runGated(t, ws, g, c.tool, c.args)
				assert.Empty(t, g.asked, "refused before any review: %s %v", c.tool, c.args)
			} else {
				res = run(t, ws, c.tool, c.args)
			}
			assert.True(t, res.IsError, "%s %v: %s", c.tool, c.args, res.Content)
			assert.Contains(t, res.Content, c.want, "%s %v", c.tool, c.args)
			assert.Contains(t, res.Content, "nothing was changed", "%s %v", c.tool, c.args)
		}
	}
	assert.Equal(t, "{}\n", toolstest.ReadFile(t, ws, ".mcp.json"))
	assert.Equal(t, "{}\n", toolstest.ReadFile(t, ws, ".vscode/tasks.json"))
	assert.Equal(t, "k\n", toolstest.ReadFile(t, ws, "keep.txt"), "a patch naming a protected file changes nothing")
	assert.NoFileExists(t, filepath.Join(ws.Root, ".nvim.lua"))
	assert.NoDirExists(t, filepath.Join(ws.Root, ".claude/hooks"))
	assert.DirExists(t, filepath.Join(ws.Root, "pkg/.vscode"))
	// Names that merely resemble them are fine.
	for _, p := range []string{"docs/mcp.json", "docs/vscode.md", "x.envrc.bak", "docs/.fidoignore"} {
		res := run(t, ws, "patch", map[string]any{"operations": []map[string]any{{"path": p, "content": "x\n"}}})
		assert.False(t, res.IsError, "%s: %s", p, res.Content)
	}
	res := run(t, ws, "rmdir", map[string]any{"path": "docs"})
	assert.False(t, res.IsError, res.Content)
}
