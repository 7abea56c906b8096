package files

import (
	"context"
	_ "embed"
	"errors"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed mkdir.md
var mkdirTemplate string

// mkdirTool is mkdir: a directory with its parents.
type mkdirTool struct{ ws *workspace.Workspace }

func newMkdir(ws *workspace.Workspace) tools.Tool {
	t := &mkdirTool{ws: ws}
	return tools.Define(tools.Def[pathParams]{
		Name: "mkdir", Access: tools.Mutating, Contract: mkdirContract,
		Run: t.run, Summarize: pathParams.summary,
	})
}

// pathParams are the arguments of mkdir, rm and rmdir; each contract says
// what the path names (Target).
type pathParams struct {
	Path string `json:"path" jsonschema:"{{.Target}}, relative to the workspace root."`
}

var mkdirContract = tools.NewContract[pathParams](mkdirTemplate, tools.Vars{"Target": "Directory to create"})

// Validate implements tools.Validator.
func (p *pathParams) Validate() error {
	if p.Path == "" {
		return errors.New("path is required")
	}
	return nil
}

func (p pathParams) summary() string { return text.Shorten(p.Path, 100) }

func (t *mkdirTool) run(ctx context.Context, inv tools.Invocation, p pathParams) (tools.Result, error) {
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if err := t.ws.Sandbox.ProtectedError(p.Path, abs); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	if fi, err := t.ws.Sandbox.Stat(abs); err == nil {
		if fi.IsDir() {
			return tools.Result{Content: rel + "/ already exists; nothing changed\n", Summary: "already exists"}, nil
		}
		return tools.ErrorResult("%s exists and is a file", rel), nil
	}
	// The topmost directory created is what undo must remove; a failure part
	// way removes what was created.
	top, err := t.ws.Sandbox.MkdirAll(abs, 0o755)
	if err != nil {
		return tools.ErrorResult("%s; nothing was created", workspace.ErrorText(t.ws, abs, err)), nil
	}
	if top == "" {
		return tools.Result{Content: rel + "/ already exists; nothing changed\n", Summary: "already exists"}, nil
	}
	note := t.ws.Record(tag(inv, workspace.UndoEntry{Tool: "mkdir", Op: "mkdir", Path: t.ws.Sandbox.Rel(top)}))
	return tools.Result{Content: "created " + rel + "/\n" + note, Summary: "created", Changed: []string{abs}}, nil
}
