package files

import (
	"context"
	_ "embed"
	"encoding/json"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed mkdir.md
var mkdirTemplate string

// MkdirTool creates a directory with its parents.
type MkdirTool struct{ ws *workspace.Workspace }

// pathParams are the arguments of mkdir, rm and rmdir; each contract says
// what the path names (Target).
type pathParams struct {
	Path string `json:"path" jsonschema:"{{.Target}}, relative to the workspace root."`
}

var mkdirContract = tools.NewContract[pathParams](mkdirTemplate, tools.Vars{"Target": "Directory to create"})

func (t *MkdirTool) Name() string         { return "mkdir" }
func (t *MkdirTool) Description() string  { return mkdirContract.Description() }
func (t *MkdirTool) Access() tools.Access { return tools.Mutating }
func (t *MkdirTool) Parameters() json.RawMessage {
	return mkdirContract.Parameters()
}

// Contract implements tools.Contracted.
func (t *MkdirTool) Contract() *tools.Contract { return mkdirContract }

func (t *MkdirTool) SummarizeCall(args json.RawMessage) string { return summarizePath(args) }

func (t *MkdirTool) Run(ctx context.Context, inv tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var p pathParams
	if err := tools.DecodeArgs(args, &p); err != nil {
		return tools.ErrorResult("mkdir: %v", err), nil
	}
	if p.Path == "" {
		return tools.ErrorResult("mkdir: path is required"), nil
	}
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return tools.ErrorResult("mkdir: %v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if err := t.ws.Sandbox.ProtectedError(p.Path, abs); err != nil {
		return tools.ErrorResult("mkdir: %v", err), nil
	}
	if fi, err := t.ws.Sandbox.Stat(abs); err == nil {
		if fi.IsDir() {
			return tools.Result{Content: rel + "/ already exists; nothing changed\n", Summary: "already exists"}, nil
		}
		return tools.ErrorResult("mkdir: %s exists and is a file", rel), nil
	}
	// The topmost directory created is what undo must remove; a failure part
	// way removes what was created.
	top, err := t.ws.Sandbox.MkdirAll(abs, 0o755)
	if err != nil {
		return tools.ErrorResult("mkdir: %s; nothing was created", workspace.ErrorText(t.ws, abs, err)), nil
	}
	if top == "" {
		return tools.Result{Content: rel + "/ already exists; nothing changed\n", Summary: "already exists"}, nil
	}
	note := t.ws.Record(tag(inv, workspace.UndoEntry{Tool: "mkdir", Op: "mkdir", Path: t.ws.Sandbox.Rel(top)}))
	return tools.Result{Content: "created " + rel + "/\n" + note, Summary: "created", Changed: []string{abs}}, nil
}

func summarizePath(args json.RawMessage) string {
	var p pathParams
	_ = json.Unmarshal(args, &p)
	return tools.Shorten(p.Path, 100)
}
