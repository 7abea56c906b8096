package files

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed rm.md
var rmTemplate string

var rmContract = tools.NewContract[pathParams](rmTemplate, tools.Vars{"Target": "File to delete", "MaxUndoContent": workspace.MaxUndoContent})

// rmTool is rm: one file deleted, its content kept in the undo log.
type rmTool struct{ ws *workspace.Workspace }

func newRm(ws *workspace.Workspace) tools.Tool {
	t := &rmTool{ws: ws}
	return tools.Define(tools.Def[pathParams]{
		Name: "rm", Access: tools.Mutating, Contract: rmContract,
		Run: t.run, Summarize: pathParams.summary,
	})
}

func (t *rmTool) run(ctx context.Context, inv tools.Invocation, p pathParams) (tools.Result, error) {
	abs, err := t.ws.Sandbox.ResolveNoFollow(p.Path)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if err := t.ws.Sandbox.ProtectedError(p.Path, abs); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	fi, err := t.ws.Sandbox.Lstat(abs)
	if err != nil {
		return tools.ErrorResult("%s", workspace.ErrorText(t.ws, abs, err)), nil
	}
	if fi.IsDir() {
		return tools.ErrorResult("%s is a directory; use rmdir to delete a directory", rel), nil
	}
	if err := t.ws.ModifiedError(ctx, abs); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	if fi.Mode().IsRegular() {
		if err := t.ws.CheckSeen(ctx, inv.Files, abs, true); err != nil {
			return tools.ErrorResult("%v", err), nil
		}
	}
	if inv.Gate != nil && inv.Gate.Reviewing() {
		ap, res, ok := reviewRemoval(ctx, t.ws, inv, "rm", rel, []string{abs}, "")
		if !ok {
			return res, nil
		}
		if err := ap.unchanged(); err != nil {
			return tools.ErrorResult("%v", err), nil
		}
		if err := t.ws.ModifiedError(ctx, abs); err != nil {
			return tools.ErrorResult("%v", err), nil
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
		return tools.ErrorResult("%s", workspace.ErrorText(t.ws, abs, err)), nil
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
