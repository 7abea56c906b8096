package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
)

// MaxInstructionBytes caps one instruction file in the system message.
const MaxInstructionBytes = 32 << 10

// maxInstructionFile is the largest instruction file read at all.
const maxInstructionFile = 1 << 20

// MaxNestedInstructionBytes caps the text of subdirectories' AGENTS.md
// files one conversation gets in its tool results: beyond it a file is
// named (so the model can read it when it matters), not attached. Without
// it, 300 nested directories with a 32 KiB AGENTS.md each made one tool
// result, and every request after it, about 10 MB.
const MaxNestedInstructionBytes = 64 << 10

// maxLeftOutNamed bounds the files named in one note of files left out.
const maxLeftOutNamed = 5

// InstructionNames are the project instruction files, in order of
// preference: the first that exists at the workspace root is used.
var InstructionNames = []string{"AGENTS.md", "CLAUDE.md"}

// InstructionFile is one instruction file that reaches the model.
type InstructionFile struct {
	// Label names it for the model and for :checkhealth (a workspace-relative
	// path, or the user file's path).
	Label string
	Text  string
	// Truncated says the file was longer than MaxInstructionBytes.
	Truncated bool
	Size      int
}

// FileReader reads a file Fido reads on its own: a regular file, without
// blocking, at most limit bytes (workspace.Sandbox.ReadOwnFile for the
// workspace, confined.ReadPath for the user's file).
type FileReader func(name string, limit int64) ([]byte, error)

// LoadInstructions reads the user-level instructions (userPath, read with
// readUser; "" for none) and then the project's (AGENTS.md, else CLAUDE.md,
// at the workspace root, read with readWorkspace). Problems other than a
// missing file are returned in words; the other files still load.
func LoadInstructions(readWorkspace FileReader, userPath string, readUser FileReader) ([]InstructionFile, []string) {
	var out []InstructionFile
	var problems []string
	if userPath != "" && readUser != nil {
		if f, err := loadInstruction(readUser, userPath, userPath); err == nil {
			out = append(out, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, fmt.Sprintf("%s: %v", userPath, err))
		}
	}
	if readWorkspace != nil {
		for _, name := range InstructionNames {
			f, err := loadInstruction(readWorkspace, name, name)
			if err == nil {
				out = append(out, f)
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			}
		}
	}
	return out, problems
}

func loadInstruction(read FileReader, name, label string) (InstructionFile, error) {
	// Files up to maxInstructionFile are read and cut to the cap (with a
	// note); a larger one is no instruction file anyone meant.
	data, err := read(name, maxInstructionFile)
	if err != nil {
		return InstructionFile{}, err
	}
	f := InstructionFile{Label: label, Size: len(data)}
	if len(data) > MaxInstructionBytes {
		data = data[:MaxInstructionBytes]
		for len(data) > 0 && !utf8.Valid(data) {
			data = data[:len(data)-1]
		}
		f.Truncated = true
	}
	f.Text = strings.TrimSpace(string(data))
	return f, nil
}

// renderInstructions is the system message's section for instruction files.
func renderInstructions(files []InstructionFile) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n# Project instructions\nThe user and the project wrote these instructions for agents working here. Follow them unless they conflict with the operating rules above.\n")
	for _, f := range files {
		fmt.Fprintf(&b, "\n## %s\n%s\n", f.Label, f.Text)
		if f.Truncated {
			fmt.Fprintf(&b, "[%s was cut at %d KiB; read the rest with read_file if you need it]\n", f.Label, MaxInstructionBytes>>10)
		}
	}
	return b.String()
}

// NestedInstructions attaches an AGENTS.md found in a subdirectory to the
// first tool result of a conversation that reaches into that directory
// (never to the system message). It is safe for concurrent use; one value
// belongs to one conversation.
type NestedInstructions struct {
	read FileReader
	mu   sync.Mutex
	// seen: directories whose AGENTS.md was looked for (attached, absent or
	// left out).
	seen map[string]bool
	// used: bytes of nested instructions the conversation carries.
	used int
}

// NewNestedInstructions reads AGENTS.md files with read (workspace-relative).
func NewNestedInstructions(read FileReader) *NestedInstructions {
	return &NestedInstructions{read: read, seen: map[string]bool{}}
}

// Seen lists the directories already handled, for saving with the
// conversation.
func (n *NestedInstructions) Seen() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.seen))
	for d := range n.seen {
		out = append(out, d)
	}
	return out
}

// MarkSeen restores directories handled earlier in a resumed conversation.
func (n *NestedInstructions) MarkSeen(dirs []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, d := range dirs {
		n.seen[d] = true
	}
}

// carry counts text a resumed conversation (or a fork) already holds.
func (n *NestedInstructions) carry(bytes int) {
	n.mu.Lock()
	n.used += bytes
	n.mu.Unlock()
}

// For returns the text to append to a tool result that touched rel (a
// workspace-relative path of a file or directory): every not yet attached
// AGENTS.md of rel's directories below the root, outermost first, as long
// as the conversation's MaxNestedInstructionBytes last; the files beyond it
// are named in a note.
func (n *NestedInstructions) For(rel string, isDir bool) string {
	rel = path.Clean(strings.TrimPrefix(strings.ReplaceAll(rel, "\\", "/"), "./"))
	if rel == "." || rel == "" || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return ""
	}
	dir := rel
	if !isDir {
		dir = path.Dir(rel)
	}
	var dirs []string
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	var b strings.Builder
	var left []string
	for _, d := range dirs {
		n.mu.Lock()
		done, full := n.seen[d], n.used >= MaxNestedInstructionBytes
		n.seen[d] = true
		n.mu.Unlock()
		if done {
			continue
		}
		name := d + "/AGENTS.md"
		if full {
			// Only whether it exists: a read of 0 bytes is "too large" for
			// a file with any text.
			if _, err := n.read(name, 0); errors.Is(err, confined.ErrTooLarge) {
				left = append(left, name)
			}
			continue
		}
		f, err := loadInstruction(n.read, name, name)
		if err != nil || f.Text == "" {
			continue
		}
		block := fmt.Sprintf("\n\n[instructions from %s, which apply to files under %s/]\n%s", f.Label, d, f.Text)
		if f.Truncated {
			block += fmt.Sprintf("\n[%s was cut at %d KiB]", f.Label, MaxInstructionBytes>>10)
		}
		n.mu.Lock()
		fits := n.used+len(block) <= MaxNestedInstructionBytes
		if fits {
			n.used += len(block)
		}
		n.mu.Unlock()
		if !fits {
			left = append(left, name)
			continue
		}
		b.WriteString(block)
	}
	if len(left) > 0 {
		b.WriteString(leftOutNote(left))
	}
	return b.String()
}

// leftOutNote names nested instruction files not attached.
func leftOutNote(left []string) string {
	named := left
	if len(named) > maxLeftOutNamed {
		named = named[:maxLeftOutNamed]
	}
	list := strings.Join(named, ", ")
	if len(left) > len(named) {
		list += fmt.Sprintf(" and %d more", len(left)-len(named))
	}
	return fmt.Sprintf("\n\n[nested instructions left out: this conversation already carries the %d KiB of them Fido adds; not attached: %s. Read one with read_file when its rules matter for your work]",
		MaxNestedInstructionBytes>>10, list)
}

// nestedTools name the tools whose results get a subdirectory's AGENTS.md,
// and how to read the paths they touched from their arguments.
var nestedTools = map[string]func(args string) []nestedPath{
	"read_file":  func(a string) []nestedPath { return pathArg(a, false) },
	"list_files": func(a string) []nestedPath { return pathArg(a, true) },
	"find_files": func(a string) []nestedPath { return pathArg(a, true) },
	"ripgrep":    func(a string) []nestedPath { return pathArg(a, true) },
	"patch": func(a string) []nestedPath {
		var out []nestedPath
		for _, p := range gjson.Get(a, "operations.#.path").Array() {
			out = append(out, nestedPath{p.String(), false})
		}
		return out
	},
}

type nestedPath struct {
	rel   string
	isDir bool
}

func pathArg(args string, dir bool) []nestedPath {
	p := gjson.Get(args, "path").String()
	if p == "" {
		return nil
	}
	return []nestedPath{{p, dir}}
}

// NestedHook is the AfterTool hook of a run whose conversation starts with
// msgs (a subagent's fork): what msgs already attached is not attached again.
func NestedHook(read FileReader, msgs []Message) func(ToolCall, tools.Result) tools.Result {
	n := NewNestedInstructions(read)
	n.MarkSeen(attachedDirs(msgs))
	n.carry(attachedBytes(msgs))
	return func(call ToolCall, res tools.Result) tools.Result { return attachNested(n, call, res) }
}

// attachNested appends the AGENTS.md files of the directories a tool call
// reached into, the first time in the conversation.
func attachNested(n *NestedInstructions, call ToolCall, res tools.Result) tools.Result {
	paths := nestedTools[call.Name]
	if paths == nil {
		return res
	}
	for _, p := range paths(call.Arguments) {
		if extra := n.For(p.rel, p.isDir); extra != "" {
			res.Content += extra
		}
	}
	return res
}

// attachedBytes is the nested instruction text a conversation's tool
// results carry: it is appended at their end, from the first marker on.
func attachedBytes(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role != RoleTool {
			continue
		}
		if i := strings.Index(m.Content, "\n\n[instructions from "); i >= 0 {
			n += len(m.Content) - i
		}
	}
	return n
}

// attachedDirs finds the directories whose AGENTS.md a conversation's tool
// results already carry.
func attachedDirs(msgs []Message) []string {
	var out []string
	const marker = "[instructions from "
	for _, m := range msgs {
		if m.Role != RoleTool {
			continue
		}
		for rest := m.Content; ; {
			i := strings.Index(rest, marker)
			if i < 0 {
				break
			}
			rest = rest[i+len(marker):]
			if j := strings.Index(rest, "/AGENTS.md"); j > 0 {
				out = append(out, rest[:j])
			}
		}
	}
	return out
}
