package files

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed patch.md
var patchTemplate string

// maxPatchFileSize bounds files that search/replace reads into memory.
const maxPatchFileSize = 16 << 20

// patchTool is patch: ordered create/overwrite and search/replace operations.
type patchTool struct{ ws *workspace.Workspace }

func newPatch(ws *workspace.Workspace) tools.Tool {
	t := &patchTool{ws: ws}
	return tools.Define(tools.Def[patchParams]{
		Name: "patch", Access: tools.Mutating, Contract: patchContract,
		Run: t.run, Summarize: patchParams.summary,
	})
}

type patchOp struct {
	Path      string  `json:"path" jsonschema:"File relative to the workspace root."`
	Content   *string `json:"content,omitempty" jsonschema:"Full new content (create or overwrite). Not with search/replace."`
	Search    *string `json:"search,omitempty" jsonschema:"Exact text to find; it must occur once (after skiplines lines, if given)."`
	Replace   *string `json:"replace,omitempty" jsonschema:"Replacement for search; \"\" deletes."`
	Skiplines *int    `json:"skiplines,omitempty" jsonschema:"Lines to skip before searching; when given, the first occurrence after them is replaced even if the text occurs again."` // nil: not given, the search text must be unique
}

type patchParams struct {
	Operations []patchOp `json:"operations" jsonschema:"Operations applied in order."`
}

var patchContract = tools.NewContract[patchParams](patchTemplate, nil, tools.MinItems("operations", 1), tools.Minimum("operations.skiplines", 0))

// Validate implements tools.Validator: every operation is checked before
// any runs.
func (p *patchParams) Validate() error {
	if len(p.Operations) == 0 {
		return errors.New("operations is required and must not be empty")
	}
	for i, op := range p.Operations {
		if err := op.validate(); err != nil {
			return fmt.Errorf("operation %d (%s): %v; nothing was changed", i+1, op.Path, err)
		}
	}
	return nil
}

func (p patchParams) summary() string {
	var paths []string
	seen := map[string]bool{}
	for _, op := range p.Operations {
		if !seen[op.Path] {
			seen[op.Path] = true
			paths = append(paths, op.Path)
		}
	}
	s := strings.Join(paths, ", ")
	if len(p.Operations) != 1 {
		s = fmt.Sprintf("%d ops: %s", len(p.Operations), s)
	}
	return text.Shorten(s, 100)
}

// validate checks an operation's shape before anything runs.
func (op patchOp) validate() error {
	switch {
	case strings.TrimSpace(op.Path) == "":
		return errors.New("path is required")
	case op.Content != nil && (op.Search != nil || op.Replace != nil):
		return errors.New("give either content, or search and replace, not both")
	case op.Content != nil:
		if op.Skiplines != nil {
			return errors.New("skiplines only applies to search/replace")
		}
		return nil
	case op.Search == nil && op.Replace == nil:
		return errors.New("give content (create/overwrite) or search and replace (edit)")
	case op.Search == nil:
		return errors.New("replace needs search")
	case op.Replace == nil:
		return errors.New(`search needs replace (use "replace": "" to delete the text)`)
	case *op.Search == "":
		return errors.New("search must not be empty")
	case op.Skiplines != nil && *op.Skiplines < 0:
		return fmt.Errorf("skiplines must be 0 or more, got %d", *op.Skiplines)
	}
	return nil
}

func (t *patchTool) run(ctx context.Context, inv tools.Invocation, p patchParams) (tools.Result, error) {
	abs := make([]string, len(p.Operations))
	for i, op := range p.Operations {
		a, err := t.ws.Sandbox.Resolve(op.Path)
		if err != nil {
			return tools.ErrorResult("operation %d: %v; nothing was changed", i+1, err), nil
		}
		if a == t.ws.Root {
			return tools.ErrorResult("operation %d: path must name a file, not the workspace root; nothing was changed", i+1), nil
		}
		if err := t.ws.Sandbox.ProtectedError(op.Path, a); err != nil {
			return tools.ErrorResult("operation %d: %v", i+1, err), nil
		}
		abs[i] = a
	}
	unsaved := func() *tools.Result {
		checked := map[string]bool{}
		for i, a := range abs {
			if checked[a] {
				continue
			}
			checked[a] = true
			if err := t.ws.ModifiedError(ctx, a); err != nil {
				res := tools.ErrorResult("operation %d: %v", i+1, err)
				return &res
			}
		}
		return nil
	}
	if res := unsaved(); res != nil {
		return *res, nil
	}
	if inv.Gate != nil && inv.Gate.Reviewing() {
		ap, res, ok := t.reviewPatch(ctx, inv, p, abs)
		if !ok {
			return res, nil
		}
		// The user may have edited while looking at the change.
		if err := ap.unchanged(); err != nil {
			return tools.ErrorResult("%v", err), nil
		}
		if res := unsaved(); res != nil {
			return *res, nil
		}
	}

	var (
		b       strings.Builder
		changed []string
		seen    = map[string]bool{}
		applied int
		failed  = -1
		reason  string
		notes   string
	)
	for i, op := range p.Operations {
		if err := ctx.Err(); err != nil && failed < 0 {
			failed, reason = i, "cancelled"
			fmt.Fprintf(&b, "op %d ✗ %s: cancelled\n", i+1, op.Path)
			continue
		}
		if failed >= 0 {
			fmt.Fprintf(&b, "op %d – %s: not attempted\n", i+1, op.Path)
			continue
		}
		// Read-before-write: an existing file must still be what the
		// conversation last saw (search/replace may edit an unread file).
		err := t.ws.CheckSeen(ctx, inv.Files, abs[i], op.Content == nil)
		var (
			msg   string
			entry workspace.UndoEntry
		)
		if err == nil {
			msg, entry, err = t.apply(op, abs[i], inv)
		}
		if err != nil {
			failed, reason = i, err.Error()
			fmt.Fprintf(&b, "op %d ✗ %s: %v\n", i+1, op.Path, err)
			continue
		}
		applied++
		inv.Files.Saw(entry.Path, entry.After)
		fmt.Fprintf(&b, "op %d ✓ %s: %s\n", i+1, op.Path, msg)
		if !seen[abs[i]] {
			seen[abs[i]] = true
			changed = append(changed, abs[i])
		}
		if n := t.ws.Record(entry); n != "" && notes == "" {
			notes = n
		}
	}
	t.ws.Reload(ctx, changed)
	b.WriteString(strings.TrimPrefix(notes, "\n"))
	total := len(p.Operations)
	if failed >= 0 {
		head := fmt.Sprintf("error: operation %d of %d failed; %d applied before it stay applied, the rest were not attempted. Fix the failed operation and send it and the remaining ones again.\n", failed+1, total, applied)
		return tools.Result{
			Content: head + b.String(),
			IsError: true,
			Summary: text.Shorten(fmt.Sprintf("%d of %d ops applied; op %d failed: %s", applied, total, failed+1, reason), 160),
			Changed: changed,
		}, nil
	}
	summary := text.Count(total, "op", "ops") + " applied"
	return tools.Result{Content: b.String(), Summary: summary, Changed: changed}, nil
}

// apply runs one operation and returns a short description and its undo entry.
func (t *patchTool) apply(op patchOp, abs string, inv tools.Invocation) (string, workspace.UndoEntry, error) {
	rel := t.ws.Sandbox.Rel(abs)
	entry := tag(inv, workspace.UndoEntry{Tool: "patch", Path: rel})
	fi, statErr := t.ws.Sandbox.Stat(abs)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return "", entry, errors.New(workspace.ErrorText(t.ws, abs, statErr))
	}
	if exists && fi.IsDir() {
		return "", entry, fmt.Errorf("%s is a directory", rel)
	}
	if exists && !fi.Mode().IsRegular() {
		return "", entry, fmt.Errorf("%s is not a regular file", rel)
	}
	perm := fs.FileMode(0o644)
	if exists {
		perm = fi.Mode().Perm()
	}

	if op.Content != nil {
		content := []byte(*op.Content)
		entry.Op = "create"
		adapted := ""
		if exists {
			entry.Op = "overwrite"
			t.ws.RecordPrior(&entry, abs)
			if usesCRLF(t.ws.Sandbox, abs) && !bytes.Contains(content, []byte("\r\n")) && bytes.Contains(content, nl) {
				content = toCRLF(content)
				adapted = ", CRLF kept"
			}
		}
		top, err := t.ws.Sandbox.MkdirAll(filepath.Dir(abs), 0o755)
		if err != nil {
			return "", entry, errors.New(workspace.ErrorText(t.ws, filepath.Dir(abs), err))
		}
		entry.After = workspace.ContentHash(content)
		var prior []byte
		if entry.Prior != nil {
			prior, _ = workspace.PriorBytes(entry)
		}
		workspace.SetWroteAll(&entry, prior, content)
		t.ws.BeginUndo(&entry)
		if err := t.ws.Sandbox.WriteFileAtomic(abs, content, perm); err != nil {
			t.ws.AbortUndo(entry)
			t.ws.RemoveEmptyDirs(filepath.Dir(abs), top)
			return "", entry, errors.New(workspace.ErrorText(t.ws, abs, err))
		}
		verb := "created"
		if exists {
			verb = "overwrote"
		}
		return fmt.Sprintf("%s (%s%s)", verb, text.Count(countLines(content), "line", "lines"), adapted), entry, nil
	}

	if !exists {
		return "", entry, fmt.Errorf("%s does not exist; use content to create it", rel)
	}
	if fi.Size() > maxPatchFileSize {
		return "", entry, fmt.Errorf("%s is %d bytes; search/replace handles files up to %d bytes (overwrite it with content instead)", rel, fi.Size(), maxPatchFileSize)
	}
	data, err := t.ws.Sandbox.ReadFile(abs, maxPatchFileSize)
	if err != nil {
		return "", entry, errors.New(workspace.ErrorText(t.ws, abs, err))
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", entry, fmt.Errorf("%s is a binary file; search/replace only edits text", rel)
	}
	entry.Op = "edit"
	workspace.PriorContent(&entry, data)
	entry.PriorMode = fi.Mode().Perm()
	out, line, err := searchReplace(data, rel, *op.Search, *op.Replace, op.Skiplines)
	if err != nil {
		return "", entry, err
	}
	entry.After = workspace.ContentHash(out)
	workspace.SetWrote(&entry, data, out)
	t.ws.BeginUndo(&entry)
	if err := t.ws.Sandbox.WriteFileAtomic(abs, out, perm); err != nil {
		t.ws.AbortUndo(entry)
		return "", entry, errors.New(workspace.ErrorText(t.ws, abs, err))
	}
	return fmt.Sprintf("replaced at line %d", line), entry, nil
}

// maxListedOccurrences caps the line numbers an ambiguity error lists.
const maxListedOccurrences = 20

// searchReplace replaces one occurrence of search in data (the file rel)
// and returns the new content and the 1-based line of the replacement.
// Without skiplines the search text must occur exactly once: several
// occurrences are refused with their line numbers, because the first one
// is often the wrong one. With skiplines the first occurrence starting
// after that many lines is replaced. A \n in search also matches \r\n, so
// LF-only search text finds its lines in CRLF and mixed files; replace then
// takes the line endings of the text it replaces.
func searchReplace(data []byte, rel, search, replace string, skiplines *int) ([]byte, int, error) {
	skip := 0
	if skiplines != nil {
		skip = *skiplines
	}
	start, ok := lineOffset(data, skip)
	if !ok {
		return nil, 0, fmt.Errorf("skiplines is %d but %s has only %d lines", skip, rel, countLines(data))
	}
	find := exactFinder([]byte(search))
	if strings.Contains(search, "\n") && !strings.Contains(search, "\r") && bytes.Contains(data, []byte("\r\n")) {
		parts := strings.Split(search, "\n")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(strings.Join(parts, `\r?\n`))
		find = func(b []byte) (int, int) {
			loc := re.FindIndex(b)
			if loc == nil {
				return -1, 0
			}
			return loc[0], loc[1] - loc[0]
		}
	}
	lineAt := func(off int) int { return bytes.Count(data[:off], nl) + 1 }
	i, n := find(data[start:])
	if i < 0 {
		if j, _ := find(data); j >= 0 {
			return nil, 0, fmt.Errorf("search text not found after skipping %d lines; it occurs earlier, at line %d (lower skiplines)", skip, lineAt(j))
		}
		return nil, 0, fmt.Errorf("search text not found in %s; it must match exactly, including whitespace and indentation: read the file again and copy the text", rel)
	}
	i += start
	if skiplines == nil {
		lines := []int{lineAt(i)}
		count := 1
		for pos := i + 1; pos < len(data); {
			j, _ := find(data[pos:])
			if j < 0 {
				break
			}
			count++
			if len(lines) < maxListedOccurrences {
				lines = append(lines, lineAt(pos+j))
			}
			pos += j + 1
		}
		if count > 1 {
			list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(lines)), ", "), "[]")
			if count > len(lines) {
				list += ", …"
			}
			return nil, 0, fmt.Errorf("search text occurs %d times in %s (at lines %s); nothing was replaced: add surrounding lines to search so it occurs once, or give skiplines to pick one (skiplines=%d replaces the first occurrence after line %d, the one at line %d)",
				count, rel, list, lines[1]-1, lines[1]-1, lines[1])
		}
	}
	matched := data[i : i+n]
	rep := []byte(replace)
	if !strings.Contains(replace, "\r") && strings.Contains(replace, "\n") && endsInCRLF(data, matched, i+n) {
		rep = toCRLF(rep)
	}
	out := make([]byte, 0, len(data)-n+len(rep))
	out = append(append(append(out, data[:i]...), rep...), data[i+n:]...)
	return out, lineAt(i), nil
}

// exactFinder finds search byte for byte: offset and length, or -1.
func exactFinder(search []byte) func([]byte) (int, int) {
	return func(b []byte) (int, int) { return bytes.Index(b, search), len(search) }
}

// endsInCRLF reports whether replaced text should use CRLF: the matched
// text's own line breaks decide; without one, the line it ends on does.
func endsInCRLF(data, matched []byte, end int) bool {
	if bytes.Contains(matched, nl) {
		return bytes.Contains(matched, []byte("\r\n"))
	}
	j := bytes.IndexByte(data[end:], '\n')
	if j < 0 {
		return bytes.Contains(data, []byte("\r\n")) // last line: the file's style
	}
	return end+j > 0 && data[end+j-1] == '\r'
}

// usesCRLF reports whether the file at abs has CRLF line endings (judged by its first line end).
func usesCRLF(sb *workspace.Sandbox, abs string) bool {
	f, fi, err := sb.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return false
	}
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	i := bytes.IndexByte(buf[:n], '\n')
	return i > 0 && buf[i-1] == '\r'
}

// toCRLF turns lone \n into \r\n.
func toCRLF(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b) + bytes.Count(b, nl))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out.WriteByte('\r')
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}

// lineOffset returns the byte offset where line n (zero-based) starts.
func lineOffset(data []byte, n int) (int, bool) {
	off := 0
	for ; n > 0; n-- {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return 0, false
		}
		off += i + 1
	}
	return off, true
}

// countLines counts lines the way an editor shows them (a final line without \n counts).
func countLines(b []byte) int {
	n := bytes.Count(b, nl)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
