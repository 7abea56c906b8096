package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed list_files.md
var listFilesDescription string

const (
	listDefaultLimit = 200
	listMaxLimit     = 1000
)

// ListFilesTool lists one directory, optionally recursively.
type ListFilesTool struct{ ws *Workspace }

type listFilesParams struct {
	Path          string `json:"path"`
	Recursive     bool   `json:"recursive"`
	IncludeHidden bool   `json:"include_hidden"`
	Offset        int    `json:"offset"`
	Limit         int    `json:"limit"`
}

func (t *ListFilesTool) Name() string        { return "list_files" }
func (t *ListFilesTool) Description() string { return listFilesDescription }
func (t *ListFilesTool) Access() Access      { return ReadOnly }
func (t *ListFilesTool) Parameters() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the workspace root; \".\" for the root."},
    "recursive": {"type": "boolean", "description": "List everything below path, not only its direct children. Default false."},
    "include_hidden": {"type": "boolean", "description": "Also list directories whose name starts with a dot. Default false."},
    "offset": {"type": "integer", "minimum": 0, "description": "Number of entries to skip (pagination). Default 0."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Maximum entries to return. Default 200."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func (t *ListFilesTool) SummarizeCall(args json.RawMessage) string {
	var p listFilesParams
	_ = json.Unmarshal(args, &p)
	s := displayDir(p.Path)
	if p.Recursive {
		s += " (recursive)"
	}
	if p.Offset > 0 {
		s += fmt.Sprintf(" from %d", p.Offset)
	}
	return s
}

func (t *ListFilesTool) Run(ctx context.Context, _ Invocation, args json.RawMessage) (Result, error) {
	var p listFilesParams
	if err := DecodeArgs(args, &p); err != nil {
		return ErrorResult("list_files: %v", err), nil
	}
	if p.Offset < 0 {
		return ErrorResult("list_files: offset must be 0 or more, got %d", p.Offset), nil
	}
	switch {
	case p.Limit < 0:
		return ErrorResult("list_files: limit must be positive, got %d", p.Limit), nil
	case p.Limit == 0:
		p.Limit = listDefaultLimit
	case p.Limit > listMaxLimit:
		p.Limit = listMaxLimit
	}
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return ErrorResult("list_files: %v", err), nil
	}
	fi, err := t.ws.Sandbox.Stat(abs)
	if err != nil {
		return ErrorResult("list_files: %v", describeStatError(p.Path, err)), nil
	}
	if !fi.IsDir() {
		return ErrorResult("list_files: %s is a file, not a directory; use read_file to read it", p.Path), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	opt := walkOptions{HiddenDirs: p.IncludeHidden, HiddenFiles: true}
	if !p.Recursive {
		opt.MaxDepth = 1
	}
	lines := make([][]string, opt.workerCount())
	stats := walkDir(ctx, t.ws.Sandbox, abs, rel, opt, func(w int, e walkEntry) bool {
		lines[w] = append(lines[w], entryLine(e))
		return true
	})
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var all []string
	for _, l := range lines {
		all = append(all, l...)
	}
	sort.Strings(all)
	total := len(all)
	var b strings.Builder
	if p.Offset >= total && total > 0 {
		return ErrorResult("list_files: offset %d is past the end: %s has %d entries", p.Offset, displayDir(rel), total), nil
	}
	end := min(total, p.Offset+p.Limit)
	page := all[min(p.Offset, total):end]
	for _, l := range page {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	switch {
	case total == 0:
		b.WriteString("(no entries: the directory is empty or everything in it is hidden or ignored)\n")
	case end < total:
		fmt.Fprintf(&b, "[more: %d of %d entries shown; call list_files with offset=%d for the next page]\n", len(page), total, end)
	}
	if stats.Unreadable > 0 {
		fmt.Fprintf(&b, "[%d directories could not be read, e.g. %s]\n", stats.Unreadable, stats.FirstError)
	}
	summary := fmt.Sprintf("%d entries", total)
	if len(page) < total {
		summary = fmt.Sprintf("%d of %d entries", len(page), total)
	}
	return Result{Content: b.String(), Summary: summary}, nil
}

// entryLine renders one listing line: directories end in /, links show their target.
func entryLine(e walkEntry) string {
	switch {
	case e.isDir():
		return e.Rel + "/"
	case e.isLink():
		target, err := e.readlink()
		if err != nil {
			return e.Rel + " -> ?"
		}
		return e.Rel + " -> " + filepath.ToSlash(target)
	}
	return e.Rel
}

// displayDir names a directory argument in summaries.
func displayDir(p string) string {
	if p == "" || p == "." || p == "./" {
		return "./"
	}
	return strings.TrimSuffix(p, "/") + "/"
}
