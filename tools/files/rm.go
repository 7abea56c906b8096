package files

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed rm.md
var rmTemplate string

var rmContract = tools.NewContract[pathParams](rmTemplate, tools.Vars{"Target": "File to delete", "MaxUndoContent": workspace.MaxUndoContent})

// RmTool deletes one file, keeping its content in the undo log.
type RmTool struct{ ws *workspace.Workspace }

func (t *RmTool) Name() string         { return "rm" }
func (t *RmTool) Description() string  { return rmContract.Description() }
func (t *RmTool) Access() tools.Access { return tools.Mutating }
func (t *RmTool) Parameters() json.RawMessage {
	return rmContract.Parameters()
}

// Contract implements tools.Contracted.
func (t *RmTool) Contract() *tools.Contract { return rmContract }

func (t *RmTool) SummarizeCall(args json.RawMessage) string { return summarizePath(args) }

func (t *RmTool) Run(ctx context.Context, inv tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var p pathParams
	if err := tools.DecodeArgs(args, &p); err != nil {
		return tools.ErrorResult("rm: %v", err), nil
	}
	if p.Path == "" {
		return tools.ErrorResult("rm: path is required"), nil
	}
	abs, err := t.ws.Sandbox.ResolveNoFollow(p.Path)
	if err != nil {
		return tools.ErrorResult("rm: %v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if err := t.ws.Sandbox.ProtectedError(p.Path, abs); err != nil {
		return tools.ErrorResult("rm: %v", err), nil
	}
	fi, err := t.ws.Sandbox.Lstat(abs)
	if err != nil {
		return tools.ErrorResult("rm: %s", workspace.ErrorText(t.ws, abs, err)), nil
	}
	if fi.IsDir() {
		return tools.ErrorResult("rm: %s is a directory; use rmdir to delete a directory", rel), nil
	}
	if err := t.ws.ModifiedError(ctx, abs); err != nil {
		return tools.ErrorResult("rm: %v", err), nil
	}
	if fi.Mode().IsRegular() {
		if err := t.ws.CheckSeen(ctx, inv.Files, abs, true); err != nil {
			return tools.ErrorResult("rm: %v", err), nil
		}
	}
	if inv.Gate != nil && inv.Gate.Reviewing() {
		ap, res, ok := reviewRemoval(ctx, t.ws, inv, "rm", rel, []string{abs}, "")
		if !ok {
			return res, nil
		}
		if err := ap.unchanged(); err != nil {
			return tools.ErrorResult("rm: %v", err), nil
		}
		if err := t.ws.ModifiedError(ctx, abs); err != nil {
			return tools.ErrorResult("rm: %v", err), nil
		}
	}
	entry := tag(inv, workspace.UndoEntry{Tool: "rm", Op: "rm", Path: rel})
	if fi.Mode().IsRegular() {
		t.ws.RecordPrior(&entry, abs)
	} else if target, err := t.ws.Sandbox.Readlink(abs); err == nil {
		entry.Existed, entry.PriorOmitted = true, "symbolic link to "+target
	}
	t.ws.BeginUndo(&entry)
	if err := t.ws.Sandbox.Remove(abs); err != nil {
		t.ws.AbortUndo(entry)
		return tools.ErrorResult("rm: %s", workspace.ErrorText(t.ws, abs, err)), nil
	}
	inv.Files.Forget(rel)
	note := t.ws.Record(entry)
	t.ws.Reload(ctx, []string{abs})
	return tools.Result{
		Content: fmt.Sprintf("deleted %s (%d bytes)\n%s", rel, fi.Size(), note),
		Summary: "deleted",
		Changed: []string{abs},
	}, nil
}
