package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed rm.md
var rmDescription string

// RmTool deletes one file, keeping its content in the undo log.
type RmTool struct{ ws *Workspace }

func (t *RmTool) Name() string        { return "rm" }
func (t *RmTool) Description() string { return rmDescription }
func (t *RmTool) Access() Access      { return Mutating }
func (t *RmTool) Parameters() json.RawMessage {
	return pathSchema("File to delete, relative to the workspace root.")
}
func (t *RmTool) SummarizeCall(args json.RawMessage) string { return summarizePath(args) }

func (t *RmTool) Run(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error) {
	var p pathParams
	if err := DecodeArgs(args, &p); err != nil {
		return ErrorResult("rm: %v", err), nil
	}
	if p.Path == "" {
		return ErrorResult("rm: path is required"), nil
	}
	abs, err := t.ws.Sandbox.ResolveNoFollow(p.Path)
	if err != nil {
		return ErrorResult("rm: %v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if err := t.ws.Sandbox.gitDirError(p.Path, abs); err != nil {
		return ErrorResult("rm: %v", err), nil
	}
	fi, err := t.ws.Sandbox.Lstat(abs)
	if err != nil {
		return ErrorResult("rm: %s", ErrorText(t.ws, abs, err)), nil
	}
	if fi.IsDir() {
		return ErrorResult("rm: %s is a directory; use rmdir to delete a directory", rel), nil
	}
	if err := t.ws.modifiedError(ctx, abs); err != nil {
		return ErrorResult("rm: %v", err), nil
	}
	if fi.Mode().IsRegular() {
		if err := t.ws.checkSeen(ctx, inv.Files, abs, true); err != nil {
			return ErrorResult("rm: %v", err), nil
		}
	}
	if inv.Gate != nil && inv.Gate.Reviewing() {
		ap, res, ok := reviewRemoval(ctx, t.ws, inv, "rm", rel, []string{abs}, "")
		if !ok {
			return res, nil
		}
		if err := ap.unchanged(); err != nil {
			return ErrorResult("rm: %v", err), nil
		}
		if err := t.ws.modifiedError(ctx, abs); err != nil {
			return ErrorResult("rm: %v", err), nil
		}
	}
	entry := tag(inv, UndoEntry{Tool: "rm", Op: "rm", Path: rel})
	if fi.Mode().IsRegular() {
		t.ws.recordPrior(&entry, abs)
	} else if target, err := t.ws.Sandbox.Readlink(abs); err == nil {
		entry.Existed, entry.PriorOmitted = true, "symbolic link to "+target
	}
	t.ws.beginUndo(&entry)
	if err := t.ws.Sandbox.Remove(abs); err != nil {
		t.ws.abortUndo(entry)
		return ErrorResult("rm: %s", ErrorText(t.ws, abs, err)), nil
	}
	inv.Files.Forget(rel)
	note := t.ws.record(entry)
	t.ws.reload(ctx, []string{abs})
	return Result{
		Content: fmt.Sprintf("deleted %s (%d bytes)\n%s", rel, fi.Size(), note),
		Summary: "deleted",
		Changed: []string{abs},
	}, nil
}
