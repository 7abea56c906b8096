package files

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
)

func TestMkdir(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"file": "x", "have/": ""})
	res := run(t, ws, "mkdir", map[string]any{"path": "a/b/c"})
	require.False(t, res.IsError, res.Content)
	assert.DirExists(t, filepath.Join(ws.Root, "a/b/c"))
	assert.Equal(t, []string{filepath.Join(ws.Root, "a/b/c")}, res.Changed)
	e := ws.Undo.Entries()
	require.Len(t, e, 1)
	assert.Equal(t, "mkdir", e[0].Op)
	assert.Equal(t, "a", e[0].Path, "undo removes the topmost directory created")

	res = run(t, ws, "mkdir", map[string]any{"path": "have"})
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content, "already exists")
	assert.Len(t, ws.Undo.Entries(), 1)

	for args, want := range map[string]string{
		`{"path": "file"}`:      "exists and is a file",
		`{"path": "file/sub"}`:  "not a directory",
		`{}`:                    "path is required",
		`{"path": "../x"}`:      "leaves the workspace",
		`{"path": 3}`:           `argument "path" must be a string`,
		`{"path": "x", "p": 1}`: `unknown argument "p"`,
	} {
		res := run(t, ws, "mkdir", args)
		require.True(t, res.IsError, args)
		assert.Contains(t, res.Summary, want, args)
	}
}

func TestRm(t *testing.T) {
	ws, ed := toolstest.Workspace(t, map[string]string{"a.txt": "content\n", "dirty.txt": "d", "dir/f": "", "bin": "\x00\xff"})
	outside := filepath.Join(t.TempDir(), "target.txt")
	require.NoError(t, os.WriteFile(outside, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws.Root, "out-link")))
	ed.Unsaved[filepath.Join(ws.Root, "dirty.txt")] = true

	res := run(t, ws, "rm", map[string]any{"path": "a.txt"})
	require.False(t, res.IsError, res.Content)
	assert.NoFileExists(t, filepath.Join(ws.Root, "a.txt"))
	assert.Equal(t, [][]string{{filepath.Join(ws.Root, "a.txt")}}, ed.Reloaded)
	e := ws.Undo.Entries()
	require.Len(t, e, 1)
	require.NotNil(t, e[0].Prior)
	assert.Equal(t, "content\n", *e[0].Prior)

	res = run(t, ws, "rm", map[string]any{"path": "bin"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "base64", ws.Undo.Entries()[0].Encoding)

	res = run(t, ws, "rm", map[string]any{"path": "out-link"})
	require.False(t, res.IsError, res.Content)
	assert.FileExists(t, outside, "removing a link never touches its target")

	for path, want := range map[string]string{
		"dirty.txt": "dirty.txt has unsaved changes",
		"dir":       "is a directory; use rmdir",
		"missing":   "missing does not exist",
		"/etc/x":    "absolute",
	} {
		res := run(t, ws, "rm", map[string]any{"path": path})
		require.True(t, res.IsError, path)
		assert.Contains(t, res.Summary, want)
	}
	assert.FileExists(t, filepath.Join(ws.Root, "dirty.txt"))
}

func TestRmdir(t *testing.T) {
	ws, ed := toolstest.Workspace(t, map[string]string{"d/a.txt": "", "d/sub/b.txt": "", "d/.hidden": "", "keep/dirty.txt": "", "f.txt": ""})
	ed.Unsaved[filepath.Join(ws.Root, "keep/dirty.txt")] = true

	res := run(t, ws, "rmdir", map[string]any{"path": "d"})
	require.False(t, res.IsError, res.Content)
	assert.NoDirExists(t, filepath.Join(ws.Root, "d"))
	assert.Equal(t, "deleted 3 files", res.Summary)
	assert.Contains(t, res.Changed, filepath.Join(ws.Root, "d"))
	assert.Contains(t, res.Changed, filepath.Join(ws.Root, "d/sub/b.txt"))
	require.Len(t, ed.Reloaded, 1)
	e := ws.Undo.Entries()
	require.Len(t, e, 1)
	assert.Equal(t, "rmdir", e[0].Op)
	assert.Equal(t, "d", e[0].Path)

	for path, want := range map[string]string{
		"keep":  "keep/dirty.txt has unsaved changes",
		".":     "refusing to delete the workspace root",
		"":      "path is required",
		"f.txt": "is a file; use rm",
		"../..": "leaves the workspace",
	} {
		res := run(t, ws, "rmdir", map[string]any{"path": path})
		require.True(t, res.IsError, path)
		assert.Contains(t, res.Summary, want, path)
	}
	assert.FileExists(t, filepath.Join(ws.Root, "keep/dirty.txt"))
}

func TestReadOnlyToolBadInput(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "x\n", "bin.dat": "ab\x00cd", "dir/": ""})
	tests := []struct {
		tool, args, want string
	}{
		{"read_file", `{}`, "path is required"},
		{"read_file", `{"path": "bin.dat"}`, "bin.dat is a binary file"},
		{"read_file", `{"path": "dir"}`, "dir is a directory"},
		{"read_file", `{"path": "nope"}`, "nope does not exist"},
		{"read_file", `{"path": "a.txt", "seek": 5}`, "seek 5 is past the end: a.txt has 1 lines"},
		{"read_file", `{"path": "a.txt", "seek": -1}`, "seek must be 0 or more"},
		{"read_file", `{"path": "a.txt", "limit": "ten"}`, `argument "limit" must be an integer`},
		{"read_file", `{"path": "/etc/passwd"}`, "absolute"},
		{"list_files", `{"path": "a.txt"}`, "a.txt is a file"},
		{"list_files", `{"path": "nope"}`, "nope does not exist"},
		{"list_files", `{"path": ".", "offset": 50}`, "offset 50 is past the end"},
		{"list_files", `{"path": "..", "recursive": true}`, "leaves the workspace"},
		{"find_files", `{}`, "pattern is required"},
		{"find_files", `{"pattern": "[", "path": "."}`, "invalid glob"},
		{"find_files", `{"pattern": "*", "path": "a.txt"}`, "a.txt is a file"},
		{"ripgrep", `{}`, "pattern is required"},
		{"ripgrep", `{"pattern": "(?<=x)y"}`, "invalid regular expression"},
		{"ripgrep", `{"pattern": "x", "glob": "["}`, "invalid glob"},
		{"ripgrep", `{"pattern": "x", "path": "missing"}`, "missing does not exist"},
		{"ripgrep", `{"pattern": "x", "limit": -1}`, "limit must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			res := run(t, ws, tt.tool, tt.args)
			require.True(t, res.IsError, res.Content)
			assert.Contains(t, res.Summary, tt.want)
			var obj map[string]any
			assert.NoError(t, json.Unmarshal([]byte(res.Content), &obj), "errors reach the model as {\"error\": ...}")
		})
	}
}

func TestPermissionErrors(t *testing.T) {
	if os.Geteuid() == 0 {
		// root bypasses file modes, so chmod cannot produce EACCES: run this
		// test again in a child process as the unprivileged user nobody.
		runAsNobody(t, "TestPermissionErrors")
		return
	}
	ws, _ := toolstest.Workspace(t, map[string]string{"locked.txt": "x\n", "ro/f.txt": "y\n", "closed/g.txt": "Parse\n", "open.txt": "Parse\n"})
	require.NoError(t, os.Chmod(filepath.Join(ws.Root, "locked.txt"), 0))
	require.NoError(t, os.Chmod(filepath.Join(ws.Root, "ro"), 0o555))
	require.NoError(t, os.Chmod(filepath.Join(ws.Root, "closed"), 0))
	t.Cleanup(func() {
		_ = os.Chmod(filepath.Join(ws.Root, "ro"), 0o755)
		_ = os.Chmod(filepath.Join(ws.Root, "closed"), 0o755)
	})
	res := run(t, ws, "read_file", map[string]any{"path": "locked.txt"})
	require.True(t, res.IsError)
	assert.Contains(t, res.Summary, "permission denied")
	res = run(t, ws, "patch", map[string]any{"operations": []op{{"path": "ro/new.txt", "content": "z"}}})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "permission denied")
	res = run(t, ws, "ripgrep", map[string]any{"pattern": "Parse"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "open.txt:1:Parse")
	assert.Contains(t, res.Content, "could not be read")
}

// runAsNobody re-runs one test of this test binary as uid/gid 65534, from a
// copy of the binary that user can execute, and fails when it fails.
func runAsNobody(t *testing.T, test string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fido-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "tools.test")
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	cmd := exec.Command(bin, "-test.run", "^"+test+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s as nobody:\n%s", test, out)
	require.Contains(t, string(out), "--- PASS: "+test, "the test ran as nobody:\n%s", out)
}

// A failed change leaves no entry behind.
func TestPatchFailureLeavesNoPendingEntry(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"ro/a.go": "x\n"})
	require.NoError(t, os.Chmod(filepath.Join(ws.Root, "ro"), 0o500))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(ws.Root, "ro"), 0o755) })
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	res := run(t, ws, "patch", map[string]any{"operations": []op{{"path": "ro/a.go", "content": "y\n"}}})
	require.True(t, res.IsError)
	assert.Empty(t, ws.Undo.Entries())
}
