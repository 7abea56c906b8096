package agent

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

func workspaceReader(t *testing.T, root string) FileReader {
	t.Helper()
	ws, err := workspace.NewSandbox(root)
	require.NoError(t, err)
	return ws.ReadOwnFile
}

func TestLoadInstructionsOrderAndPreference(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	user := filepath.Join(cfg, "AGENTS.md")
	require.NoError(t, os.WriteFile(user, []byte("USER-RULES\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("CLAUDE-RULES"), 0o600))

	files, problems := LoadInstructions(workspaceReader(t, root), user, confined.ReadPath)
	require.Empty(t, problems)
	require.Len(t, files, 2)
	assert.Equal(t, user, files[0].Label)
	assert.Equal(t, "CLAUDE.md", files[1].Label, "CLAUDE.md when there is no AGENTS.md")

	require.NoError(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("AGENTS-RULES"), 0o600))
	files, _ = LoadInstructions(workspaceReader(t, root), user, confined.ReadPath)
	require.Len(t, files, 2)
	assert.Equal(t, "AGENTS.md", files[1].Label)
	assert.Equal(t, "AGENTS-RULES", files[1].Text)

	sys := BuildSystemPrompt(PromptInput{Root: root, Instructions: files})
	assert.Contains(t, sys, "# Project instructions")
	assert.Less(t, strings.Index(sys, "USER-RULES"), strings.Index(sys, "AGENTS-RULES"), "user-level first")
	assert.NotContains(t, sys, "CLAUDE-RULES")
	assert.True(t, strings.HasPrefix(sys, BuildSystemPrompt(PromptInput{Root: root})),
		"instructions only append: the rest of the system message keeps its bytes")
}

func TestInstructionsAreCappedWithANote(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("é", MaxInstructionBytes) // 2 bytes a rune: twice the cap
	require.NoError(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(big), 0o600))
	files, problems := LoadInstructions(workspaceReader(t, root), "", nil)
	require.Empty(t, problems)
	require.Len(t, files, 1)
	assert.True(t, files[0].Truncated)
	assert.LessOrEqual(t, len(files[0].Text), MaxInstructionBytes)
	assert.True(t, strings.HasSuffix(files[0].Text, "é"), "cut on a rune boundary")
	assert.Contains(t, BuildSystemPrompt(PromptInput{Root: root, Instructions: files}), "AGENTS.md was cut at 32 KiB")
}

func TestHostileInstructionFilesAreSkipped(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "AGENTS.md"), 0o600))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "CLAUDE.md")))
	files, problems := LoadInstructions(workspaceReader(t, root), "", nil)
	assert.Empty(t, files)
	assert.Len(t, problems, 2)
}

func TestNestedInstructionsAttachOnce(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "pkg", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "pkg", "AGENTS.md"), []byte("PKG-RULES"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "pkg", "sub", "AGENTS.md"), []byte("SUB-RULES"), 0o600))
	n := NewNestedInstructions(workspaceReader(t, root))

	first := n.For("pkg/sub/a.go", false)
	assert.Contains(t, first, "[instructions from pkg/AGENTS.md")
	assert.Contains(t, first, "SUB-RULES")
	assert.Less(t, strings.Index(first, "PKG-RULES"), strings.Index(first, "SUB-RULES"))
	assert.Empty(t, n.For("pkg/sub/b.go", false), "attached once per conversation")
	assert.Empty(t, n.For("pkg", true))
	assert.Empty(t, n.For("README.md", false), "the root's file is in the system message")
	assert.Empty(t, n.For("../outside/x", false))

	resumed := NewNestedInstructions(workspaceReader(t, root))
	resumed.MarkSeen(n.Seen())
	assert.Empty(t, resumed.For("pkg/sub/c.go", false), "a resumed conversation remembers")
}

func TestUserCommands(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	}
	write(ws, "greet.md", "---\ndescription: Say hello\nargument-hint: <name> [mood]\n---\nHello $1, you seem $2. All: $ARGUMENTS.")
	write(ws, "git/commit.md", "Write a commit message for @CHANGES.md")
	write(ws, "help.md", "shadowed by the built-in")
	write(user, "greet.md", "the workspace's greet wins")
	write(user, "mine.md", "user command")
	cmds, problems := LoadUserCommands([]CommandDir{{Dir: ws}, {Dir: user}, {Dir: filepath.Join(ws, "missing")}}, Commands)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "/help is a built-in command")
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"git:commit", "greet", "mine"}, names)
	greet := cmds[1]
	assert.Equal(t, "Say hello", greet.Description)
	assert.Equal(t, "<name> [mood]", greet.ArgumentHint)
	assert.Equal(t, "Hello Ada, you seem calm. All: Ada calm today.", greet.Expand("Ada calm today"))
	assert.Equal(t, "Hello , you seem . All: .", greet.Expand(""))
	assert.Equal(t, "Write a commit message for @CHANGES.md", cmds[0].Expand(""))
}

// A subagent's hook starts from what its fork carries: a directory whose
// AGENTS.md the parent already got is not attached again; another is.
func TestNestedHookForAFork(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "AGENTS.md"), []byte("RULES-"+d), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "x.go"), []byte("package x\n"), 0o600))
	}
	read := workspaceReader(t, root)
	parent := NewNestedInstructions(read)
	fork := []Message{{Role: RoleTool, ToolCallID: "c", Content: "file" + parent.For("a/x.go", false)}}
	hook := NestedHook(read, fork)
	res := hook(ToolCall{Name: "read_file", Arguments: `{"path":"a/x.go"}`}, tools.Result{Content: "package x"})
	assert.Equal(t, "package x", res.Content, "the fork already carries a/AGENTS.md")
	res = hook(ToolCall{Name: "ripgrep", Arguments: `{"pattern":"x","path":"b"}`}, tools.Result{Content: "b/x.go:1:package x"})
	assert.Contains(t, res.Content, "RULES-b")
	res = hook(ToolCall{Name: "patch", Arguments: `{"operations":[{"path":"b/y.go","content":"x"}]}`}, tools.Result{Content: "ok"})
	assert.Equal(t, "ok", res.Content, "once per conversation")
}

// A hostile tree of 300 nested directories, each with a 32 KiB AGENTS.md:
// one read of the deepest file attaches at most MaxNestedInstructionBytes
// of them and names what it left out; later results add nothing more, and
// a resumed conversation counts what it already carries.
func TestNestedInstructionsAreCappedPerConversation(t *testing.T) {
	root := t.TempDir()
	dir, rel := root, ""
	rules := strings.Repeat("rule ", 32<<10/5)
	for i := 0; i < 300; i++ {
		dir, rel = filepath.Join(dir, "d"), path.Join(rel, "d")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(rules), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n"), 0o600))
	n := NewNestedInstructions(workspaceReader(t, root))
	start := time.Now()
	extra := n.For(rel+"/x.go", false)
	t.Logf("%d bytes attached in %s", len(extra), time.Since(start))
	assert.LessOrEqual(t, len(extra), MaxNestedInstructionBytes+1024, "bounded (was about 10 MB)")
	assert.Equal(t, 1, strings.Count(extra, "[instructions from "), "one 32 KiB file fits with its header; the second would pass the cap")
	assert.Contains(t, extra, "[nested instructions left out: this conversation already carries the 64 KiB of them Fido adds; not attached: d/d/AGENTS.md")
	assert.Contains(t, extra, "and 294 more")
	assert.Contains(t, extra, "Read one with read_file")
	assert.Empty(t, n.For(rel+"/y.go", false), "nothing again")

	// A resumed conversation, and a fork, start from what they carry.
	msgs := []Message{{Role: RoleTool, ToolCallID: "c", Content: "package x" + extra}}
	hook := NestedHook(workspaceReader(t, root), msgs)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "other"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "other", "AGENTS.md"), []byte(rules), 0o600))
	res := hook(ToolCall{Name: "read_file", Arguments: `{"path":"other/a.go"}`}, tools.Result{Content: "a"})
	assert.NotContains(t, res.Content, "[instructions from other/AGENTS.md")
	assert.Contains(t, res.Content, "not attached: other/AGENTS.md")
}

// A hostile clone with thousands of command files: at most MaxUserCommands
// are read and listed, the rest is counted and said once; the index answers
// completion from memory, picks up a new file, and a submitted command is
// found off Neovim's path.
func TestUserCommandsAreCappedAndIndexed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "commands")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i := 0; i < 6000; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%05d.md", i)), []byte("---\ndescription: d\n---\nbody"), 0o600))
	}
	cmds, problems := LoadUserCommands([]CommandDir{{Dir: dir}}, Commands)
	assert.Len(t, cmds, MaxUserCommands)
	assert.Equal(t, "c00000", cmds[0].Name)
	require.NotEmpty(t, problems)
	assert.Contains(t, problems[len(problems)-1], "Fido lists at most 500 custom commands")
	assert.Contains(t, problems[len(problems)-1], "more than 5000 entries")

	var notes []string
	var mu sync.Mutex
	x := NewCommandIndex([]CommandDir{{Dir: dir}}, Commands)
	x.Notify = func(m string) { mu.Lock(); notes = append(notes, m); mu.Unlock() }
	x.Refresh()
	c, ok := x.Find("c00042")
	require.True(t, ok)
	assert.Equal(t, "body", c.Body)
	_, ok = x.Find("c05999")
	assert.False(t, ok, "beyond the cap")
	for i := 0; i < 20; i++ {
		start := time.Now()
		list, _ := x.List()
		assert.Len(t, list, MaxUserCommands)
		assert.Less(t, time.Since(start), 60*time.Millisecond, "List answers from the index")
	}
	mu.Lock()
	assert.Len(t, notes, 1, "said once")
	mu.Unlock()

	small := filepath.Join(t.TempDir(), "commands")
	require.NoError(t, os.MkdirAll(small, 0o755))
	y := NewCommandIndex([]CommandDir{{Dir: small}}, Commands)
	list, _ := y.List()
	assert.Empty(t, list)
	require.NoError(t, os.WriteFile(filepath.Join(small, "fresh.md"), []byte("hi"), 0o600))
	_, ok = y.Find("fresh")
	assert.True(t, ok, "a file just written is found when submitted")
	require.Eventually(t, func() bool { l, _ := y.List(); return len(l) == 1 }, 5*time.Second, 50*time.Millisecond, "and completed soon")
}
