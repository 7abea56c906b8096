package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

type op = map[string]any

func TestPatchOperations(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		ops     []op
		want    map[string]string
		content string // substring of the result
	}{
		{"create with parents", nil,
			[]op{{"path": "a/b/new.go", "content": "package b\n"}},
			map[string]string{"a/b/new.go": "package b\n"}, "created (1 line)"},
		{"create empty", nil,
			[]op{{"path": "empty", "content": ""}},
			map[string]string{"empty": ""}, "created (0 lines)"},
		{"overwrite", map[string]string{"f.txt": "old\n"},
			[]op{{"path": "f.txt", "content": "new\ntext\n"}},
			map[string]string{"f.txt": "new\ntext\n"}, "overwrote (2 lines)"},
		{"explicit skiplines 0 takes the first of several", map[string]string{"f.txt": "x = 1\nx = 1\n"},
			[]op{{"path": "f.txt", "search": "x = 1", "replace": "x = 2", "skiplines": 0}},
			map[string]string{"f.txt": "x = 2\nx = 1\n"}, "replaced at line 1"},
		{"unique text needs no skiplines", map[string]string{"f.txt": "x = 1\ny = 1\n"},
			[]op{{"path": "f.txt", "search": "y = 1", "replace": "y = 2"}},
			map[string]string{"f.txt": "x = 1\ny = 2\n"}, "replaced at line 2"},
		{"LF search in a mixed file finds an LF region", map[string]string{"m.txt": "a\r\nb\nc\nd\r\n"},
			[]op{{"path": "m.txt", "search": "b\nc\n", "replace": "B\nC\n"}},
			map[string]string{"m.txt": "a\r\nB\nC\nd\r\n"}, "replaced at line 2"},
		{"LF search in a mixed file finds a mixed region", map[string]string{"m.txt": "a\r\nb\nc\r\nd\n"},
			[]op{{"path": "m.txt", "search": "a\nb\nc", "replace": "x\ny"}},
			map[string]string{"m.txt": "x\r\ny\r\nd\n"}, "replaced at line 1"},
		{"one-line search in a CRLF file keeps CRLF in replace", map[string]string{"w.txt": "a\r\nb\r\n"},
			[]op{{"path": "w.txt", "search": "b", "replace": "b\nb2"}},
			map[string]string{"w.txt": "a\r\nb\r\nb2\r\n"}, "replaced at line 2"},
		{"skiplines targets a later match", map[string]string{"f.txt": "x = 1\nx = 1\nx = 1\n"},
			[]op{{"path": "f.txt", "search": "x = 1", "replace": "x = 2", "skiplines": 1}},
			map[string]string{"f.txt": "x = 1\nx = 2\nx = 1\n"}, "replaced at line 2"},
		{"delete text", map[string]string{"f.txt": "keep\ndrop\nkeep\n"},
			[]op{{"path": "f.txt", "search": "drop\n", "replace": ""}},
			map[string]string{"f.txt": "keep\nkeep\n"}, "replaced at line 2"},
		{"crlf search and replace adapted", map[string]string{"w.txt": "a\r\nb\r\nc\r\n"},
			[]op{{"path": "w.txt", "search": "a\nb\n", "replace": "A\nB\nB2\n"}},
			map[string]string{"w.txt": "A\r\nB\r\nB2\r\nc\r\n"}, "replaced at line 1"},
		{"crlf overwrite adapted", map[string]string{"w.txt": "a\r\nb\r\n"},
			[]op{{"path": "w.txt", "content": "x\ny\n"}},
			map[string]string{"w.txt": "x\r\ny\r\n"}, "CRLF kept"},
		{"ordered ops see earlier results", nil,
			[]op{{"path": "n.go", "content": "a\n"}, {"path": "n.go", "search": "a", "replace": "b"}},
			map[string]string{"n.go": "b\n"}, "op 2 ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, ed := toolstest.Workspace(t, tt.files)
			res := run(t, ws, "patch", map[string]any{"operations": tt.ops})
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, tt.content)
			for p, c := range tt.want {
				assert.Equal(t, c, toolstest.ReadFile(t, ws, p))
			}
			require.NotEmpty(t, res.Changed)
			for _, c := range res.Changed {
				assert.True(t, filepath.IsAbs(c))
			}
			require.Len(t, ed.Reloaded, 1, "the editor reloads once after the call")
			assert.Equal(t, res.Changed, ed.Reloaded[0])
			assert.Equal(t, text.Count(len(tt.ops), "op", "ops")+" applied", res.Summary)
			assert.Len(t, ws.Undo.Entries(), len(tt.ops))
		})
	}
}

func TestPatchPartialProgress(t *testing.T) {
	ws, ed := toolstest.Workspace(t, map[string]string{"a.txt": "one\n", "b.txt": "two\n"})
	res := run(t, ws, "patch", map[string]any{"operations": []op{
		{"path": "a.txt", "search": "one", "replace": "ONE"},
		{"path": "b.txt", "search": "missing", "replace": "x"},
		{"path": "c.txt", "content": "never\n"},
	}})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "operation 2 of 3 failed; 1 applied")
	assert.Contains(t, res.Content, "op 1 ✓ a.txt")
	assert.Contains(t, res.Content, "op 2 ✗ b.txt: search text not found")
	assert.Contains(t, res.Content, "op 3 – c.txt: not attempted")
	assert.Equal(t, "1 of 3 ops applied; op 2 failed: search text not found in b.txt", res.Summary[:len("1 of 3 ops applied; op 2 failed: search text not found in b.txt")])
	assert.Equal(t, "ONE\n", toolstest.ReadFile(t, ws, "a.txt"))
	assert.Equal(t, "two\n", toolstest.ReadFile(t, ws, "b.txt"))
	assert.NoFileExists(t, filepath.Join(ws.Root, "c.txt"))
	require.Len(t, res.Changed, 1)
	assert.Equal(t, [][]string{res.Changed}, ed.Reloaded)
	assert.Len(t, ws.Undo.Entries(), 1)
}

func TestPatchRefusesUnsavedBuffer(t *testing.T) {
	ws, ed := toolstest.Workspace(t, map[string]string{"a.txt": "one\n", "dirty.txt": "two\n"})
	ed.Unsaved[filepath.Join(ws.Root, "dirty.txt")] = true
	res := run(t, ws, "patch", map[string]any{"operations": []op{
		{"path": "a.txt", "content": "changed\n"},
		{"path": "dirty.txt", "search": "two", "replace": "2"},
	}})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "dirty.txt has unsaved changes")
	assert.Contains(t, res.Content, "nothing was changed")
	assert.Equal(t, "one\n", toolstest.ReadFile(t, ws, "a.txt"), "no operation runs when any target is dirty")
	assert.Empty(t, ed.Reloaded)
	assert.Empty(t, ws.Undo.Entries())

	ed.FailWith = errors.New("rpc closed")
	ed.Unsaved = map[string]bool{}
	res = run(t, ws, "patch", map[string]any{"operations": []op{{"path": "a.txt", "content": "x"}}})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "rpc closed")
}

func TestPatchErrors(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "x = 1\nx = 1\n", "bin": "a\x00b", "dir/": ""})
	tests := []struct {
		name string
		args any
		want string
	}{
		{"no operations", map[string]any{}, "operations is required"},
		{"empty operations", map[string]any{"operations": []op{}}, "operations is required"},
		{"not an array", `{"operations": "x"}`, `argument "operations" must be`},
		{"unknown field", map[string]any{"operations": []op{{"path": "a", "content": "", "mode": 1}}}, `unknown argument "mode"`},
		{"no path", map[string]any{"operations": []op{{"content": "x"}}}, "path is required"},
		{"both forms", map[string]any{"operations": []op{{"path": "a.txt", "content": "x", "search": "y", "replace": "z"}}}, "not both"},
		{"search without replace", map[string]any{"operations": []op{{"path": "a.txt", "search": "y"}}}, "search needs replace"},
		{"empty search", map[string]any{"operations": []op{{"path": "a.txt", "search": "", "replace": "z"}}}, "search must not be empty"},
		{"neither", map[string]any{"operations": []op{{"path": "a.txt"}}}, "give content"},
		{"absolute", map[string]any{"operations": []op{{"path": "/etc/passwd", "content": "x"}}}, "absolute"},
		{"traversal", map[string]any{"operations": []op{{"path": "../x", "content": "x"}}}, "leaves the workspace"},
		{"missing file", map[string]any{"operations": []op{{"path": "nope.txt", "search": "a", "replace": "b"}}}, "nope.txt does not exist"},
		{"directory", map[string]any{"operations": []op{{"path": "dir", "content": "x"}}}, "dir is a directory"},
		{"binary", map[string]any{"operations": []op{{"path": "bin", "search": "a", "replace": "b"}}}, "binary file"},
		{"skiplines past end", map[string]any{"operations": []op{{"path": "a.txt", "search": "x", "replace": "y", "skiplines": 5}}}, "has only 2 lines"},
		{"ambiguous search", map[string]any{"operations": []op{{"path": "a.txt", "search": "x = 1", "replace": "y"}}}, "occurs 2 times in a.txt (at lines 1, 2)"},
		{"match only before skiplines", map[string]any{"operations": []op{{"path": "a.txt", "search": "x = 1\nx", "replace": "y", "skiplines": 1}}}, "occurs earlier, at line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, ws, "patch", tt.args)
			require.True(t, res.IsError, res.Content)
			assert.Contains(t, res.Summary, tt.want)
		})
	}
	assert.Equal(t, "x = 1\nx = 1\n", toolstest.ReadFile(t, ws, "a.txt"))
}

func TestSearchReplaceAmbiguity(t *testing.T) {
	data := []byte("a\nfoo()\nb\nfoo()\nc\nfoo()\n")
	_, _, err := searchReplace(data, "f.go", "foo()", "bar()", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "occurs 3 times in f.go (at lines 2, 4, 6)")
	assert.Contains(t, err.Error(), "skiplines=3")
	// The suggested skiplines picks the second occurrence.
	three := 3
	out, line, err := searchReplace(data, "f.go", "foo()", "bar()", &three)
	require.NoError(t, err)
	assert.Equal(t, 4, line)
	assert.Equal(t, "a\nfoo()\nb\nbar()\nc\nfoo()\n", string(out))
	// Unique after skiplines, or several with skiplines given: applied.
	five := 5
	out, line, err = searchReplace(data, "f.go", "foo()", "bar()", &five)
	require.NoError(t, err)
	assert.Equal(t, 6, line)
	assert.Equal(t, "a\nfoo()\nb\nfoo()\nc\nbar()\n", string(out))
	// Overlapping occurrences count too.
	_, _, err = searchReplace([]byte("aaa\n"), "f", "aa", "b", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "occurs 2 times")
	// More than the listed cap.
	many := []byte(strings.Repeat("x\n", 30))
	_, _, err = searchReplace(many, "f", "x", "y", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "occurs 30 times in f (at lines 1, 2, 3")
	assert.Contains(t, err.Error(), "20, …)")
	// CRLF and LF occurrences of LF search text are both occurrences.
	_, _, err = searchReplace([]byte("a\r\nb\na\nb\r\n"), "f", "a\nb", "c", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at lines 1, 3")
}

func TestPatchThroughSymlinks(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"real.txt": "a\n"})
	outside := t.TempDir()
	require.NoError(t, os.Symlink("real.txt", filepath.Join(ws.Root, "in-link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws.Root, "out-dir")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "x.txt"), filepath.Join(ws.Root, "out-dangling")))

	res := run(t, ws, "patch", map[string]any{"operations": []op{{"path": "in-link", "search": "a", "replace": "b"}}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "b\n", toolstest.ReadFile(t, ws, "real.txt"))
	assert.Equal(t, []string{filepath.Join(ws.Root, "real.txt")}, res.Changed)

	for _, p := range []string{"out-dir/new.txt", "out-dangling"} {
		res = run(t, ws, "patch", map[string]any{"operations": []op{{"path": p, "content": "escape"}}})
		require.True(t, res.IsError, p)
		assert.Contains(t, res.Content, "outside the workspace")
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written outside")
}

func TestPatchUndoRecordsPriorContent(t *testing.T) {
	ws, _ := toolstest.Workspace(t, map[string]string{"a.txt": "before\n", "big.txt": strings.Repeat("x", workspace.MaxUndoContent+1)})
	res := run(t, ws, "patch", map[string]any{"operations": []op{
		{"path": "a.txt", "search": "before", "replace": "after"},
		{"path": "new.txt", "content": "n"},
		{"path": "big.txt", "content": "small"},
	}})
	require.False(t, res.IsError, res.Content)
	e := ws.Undo.Entries()
	require.Len(t, e, 3)
	// Newest first.
	assert.Equal(t, "big.txt", e[0].Path)
	assert.Equal(t, "overwrite", e[0].Op)
	assert.Nil(t, e[0].Prior)
	assert.Contains(t, e[0].PriorOmitted, "too large")
	assert.Equal(t, int64(workspace.MaxUndoContent+1), e[0].PriorSize)
	assert.Equal(t, "create", e[1].Op)
	assert.False(t, e[1].Existed)
	assert.Equal(t, "edit", e[2].Op)
	require.NotNil(t, e[2].Prior)
	assert.Equal(t, "before\n", *e[2].Prior)

	// The log on disk holds the same, and reopens.
	u, err := workspace.OpenUndoLog(ws.Undo.Path())
	require.NoError(t, err)
	assert.Equal(t, len(e), len(u.Entries()))
	assert.Equal(t, "before\n", *u.Entries()[2].Prior)
}
