package workspace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

func TestSandboxResolve(t *testing.T) {
	root, _ := toolstest.SymlinkFixture(t)
	sb, err := workspace.NewSandbox(root)
	require.NoError(t, err)
	real := sb.Root()
	tests := []struct {
		path    string
		want    string // relative to root; "" when an error is expected
		errPart string
	}{
		{path: "", want: "."},
		{path: ".", want: "."},
		{path: "src/a.go", want: "src/a.go"},
		{path: "./src//a.go", want: "src/a.go"},
		{path: "src/../docs", want: "docs"},
		{path: "new/dir/file.txt", want: "new/dir/file.txt"},
		{path: "link-in-file", want: "src/a.go"},
		{path: "link-in-dir/a.go", want: "src/a.go"},
		{path: "src/up/docs", want: "docs"},
		{path: "src/back-in", want: "docs"},
		{path: "dangling-in", want: "src/new.go"},
		{path: "docs/via-escape/a.go", want: "src/a.go"},
		{path: "docs/root-detour", want: "src"},
		{path: "..", errPart: "leaves the workspace"},
		{path: "../outside/secret.txt", errPart: "leaves the workspace"},
		{path: "src/../../x", errPart: "leaves the workspace"},
		{path: "/etc/passwd", errPart: "absolute"},
		{path: filepath.Join(root, "src/a.go"), errPart: "absolute"},
		{path: "link-out-file", errPart: "outside the workspace"},
		{path: "link-out-dir", errPart: "outside the workspace"},
		{path: "link-out-dir/new.txt", errPart: "outside the workspace"},
		{path: "link-out-dir/deeper/new.txt", errPart: "outside the workspace"},
		{path: "link-out-rel/secret.txt", errPart: "outside the workspace"},
		{path: "dangling-out", errPart: "outside the workspace"},
		{path: "chain/secret.txt", errPart: "outside the workspace"},
		{path: "src/up/link-out-file", errPart: "outside the workspace"},
		{path: "loop-a", errPart: "too many levels"},
		{path: "a\x00b", errPart: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := sb.Resolve(tt.path)
			if tt.errPart != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.errPart)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(real, filepath.FromSlash(tt.want)), got)
		})
	}
}

func TestSandboxResolveNoFollow(t *testing.T) {
	root, _ := toolstest.SymlinkFixture(t)
	sb, err := workspace.NewSandbox(root)
	require.NoError(t, err)
	// The link itself lies inside, so removing it is allowed.
	got, err := sb.ResolveNoFollow("link-out-file")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(sb.Root(), "link-out-file"), got)
	// But nothing below an outside link is reachable.
	_, err = sb.ResolveNoFollow("link-out-dir/x")
	assert.ErrorContains(t, err, "outside the workspace")
	_, err = sb.ResolveNoFollow("../x")
	assert.ErrorContains(t, err, "leaves the workspace")
}

func TestNewSandboxRejectsFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err := workspace.NewSandbox(f)
	assert.ErrorContains(t, err, "not a directory")
	_, err = workspace.NewSandbox(filepath.Join(dir, "missing"))
	assert.Error(t, err)
}

// FuzzSandbox hunts for paths that Resolve accepts but that reach outside
// the workspace. The oracle asks the OS: the deepest existing ancestor of
// the resolved path, with every symlink evaluated, must be inside the root,
// and nothing below it may exist (so nothing below it can be a symlink).
func FuzzSandbox(f *testing.F) {
	for _, s := range []string{
		"", ".", "src/a.go", "..", "../outside", "link-out-dir/x", "link-out-rel/../ws/src",
		"src/up/up/x", "dangling-out", "chain/secret.txt", "docs/via-escape/a.go", "loop-a/x",
		"link-in-dir/../link-out-file", "src/./../link-out-dir", "/abs", "a/b/../../..", "src/up/link-out-rel",
	} {
		f.Add(s)
	}
	root, _ := toolstest.SymlinkFixture(f)
	sb, err := workspace.NewSandbox(root)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, p string) {
		got, err := sb.Resolve(p)
		if err != nil {
			return
		}
		if !sb.Contains(got) {
			t.Fatalf("Resolve(%q) = %q, outside %q", p, got, sb.Root())
		}
		anc := got
		for {
			if _, err := os.Lstat(anc); err == nil {
				break
			} else if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "not a directory") {
				t.Fatalf("lstat %q: %v", anc, err)
			}
			anc = filepath.Dir(anc)
		}
		real, err := filepath.EvalSymlinks(anc)
		if err != nil {
			// A dangling link as the deepest existing entry would be followed by a write.
			t.Fatalf("Resolve(%q) = %q whose ancestor %q does not resolve: %v", p, got, anc, err)
		}
		if !sb.Contains(real) {
			t.Fatalf("Resolve(%q) = %q really is %q, outside the workspace", p, got, real)
		}
	})
}
