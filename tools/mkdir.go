package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed mkdir.md
var mkdirDescription string

// MkdirTool creates a directory with its parents.
type MkdirTool struct{ ws *Workspace }

type pathParams struct {
	Path string `json:"path"`
}

func (t *MkdirTool) Name() string        { return "mkdir" }
func (t *MkdirTool) Description() string { return mkdirDescription }
func (t *MkdirTool) Access() Access      { return Mutating }
func (t *MkdirTool) Parameters() json.RawMessage {
	return pathSchema("Directory to create, relative to the workspace root.")
}
func (t *MkdirTool) SummarizeCall(args json.RawMessage) string { return summarizePath(args) }

func (t *MkdirTool) Run(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error) {
	var p pathParams
	if err := DecodeArgs(args, &p); err != nil {
		return ErrorResult("mkdir: %v", err), nil
	}
	if p.Path == "" {
		return ErrorResult("mkdir: path is required"), nil
	}
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return ErrorResult("mkdir: %v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if fi, err := os.Stat(abs); err == nil {
		if fi.IsDir() {
			return Result{Content: rel + "/ already exists; nothing changed\n", Summary: "already exists"}, nil
		}
		return ErrorResult("mkdir: %s exists and is a file", rel), nil
	}
	// The topmost missing ancestor is what undo must remove.
	top := abs
	for d := filepath.Dir(abs); d != t.ws.Root && len(d) > len(t.ws.Root); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		top = d
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return ErrorResult("mkdir: %s", errorText(t.ws, abs, err)), nil
	}
	note := t.ws.record(inv.tag(UndoEntry{Tool: "mkdir", Op: "mkdir", Path: t.ws.Sandbox.Rel(top)}))
	return Result{Content: "created " + rel + "/\n" + note, Summary: "created", Changed: []string{abs}}, nil
}

func pathSchema(desc string) json.RawMessage {
	d, _ := json.Marshal(desc)
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": ` + string(d) + `}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func summarizePath(args json.RawMessage) string {
	var p pathParams
	_ = json.Unmarshal(args, &p)
	return Shorten(p.Path, 100)
}
