package files

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed rmdir.md
var rmdirTemplate string

var rmdirContract = tools.NewContract[pathParams](rmdirTemplate, tools.Vars{"Target": "Directory to delete with everything in it"})

// maxReloadPaths bounds how many removed files rmdir hands to the editor.
const maxReloadPaths = 1000

// rmdirTool is rmdir: a directory deleted recursively.
type rmdirTool struct{ ws *workspace.Workspace }

func newRmdir(ws *workspace.Workspace) tools.Tool {
	t := &rmdirTool{ws: ws}
	return tools.Define(tools.Def[pathParams]{
		Name: "rmdir", Access: tools.Mutating, Contract: rmdirContract,
		Run: t.run, Summarize: pathParams.summary,
	})
}

func (t *rmdirTool) run(ctx context.Context, inv tools.Invocation, p pathParams) (tools.Result, error) {
	abs, err := t.ws.Sandbox.ResolveNoFollow(p.Path)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	if abs == t.ws.Root {
		return tools.ErrorResult("refusing to delete the workspace root"), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if err := t.ws.Sandbox.ProtectedError(p.Path, abs); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	fi, err := t.ws.Sandbox.Lstat(abs)
	if err != nil {
		return tools.ErrorResult("%s", workspace.ErrorText(t.ws, abs, err)), nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if err := t.ws.Sandbox.Remove(abs); err != nil {
			return tools.ErrorResult("%s", workspace.ErrorText(t.ws, abs, err)), nil
		}
		note := t.ws.Record(tag(inv, workspace.UndoEntry{Tool: "rmdir", Op: "rmdir", Path: rel, Existed: true, PriorOmitted: "symbolic link; only the link was removed"}))
		return tools.Result{Content: fmt.Sprintf("removed the symbolic link %s (its target is untouched)\n%s", rel, note), Summary: "removed link", Changed: []string{abs}}, nil
	}
	if !fi.IsDir() {
		return tools.ErrorResult("%s is a file; use rm to delete a file", rel), nil
	}
	var files []string
	protected := ""
	walkErr := t.ws.Sandbox.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if r := t.ws.Sandbox.Rel(path); workspace.Protected(r) {
			protected = r
			return fs.SkipAll
		}
		if !d.IsDir() {
			files = append(files, path)
		}
		return ctx.Err()
	})
	if walkErr != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.ErrorResult("cannot read everything inside %s (%v); nothing was deleted", rel, walkErr), nil
	}
	if protected != "" {
		err := t.ws.Sandbox.ProtectedError(protected, filepath.Join(t.ws.Root, filepath.FromSlash(protected)))
		return tools.ErrorResult("%s/ cannot be deleted: %v", rel, err), nil
	}
	for _, f := range files {
		if err := t.ws.ModifiedError(ctx, f); err != nil {
			return tools.ErrorResult("%v", err), nil
		}
		if err := t.ws.CheckSeen(ctx, inv.Files, f, true); err != nil {
			return tools.ErrorResult("%v; nothing was deleted", err), nil
		}
	}
	if inv.Gate != nil && inv.Gate.Reviewing() {
		note := fmt.Sprintf("the whole directory %s/ with %s is deleted", rel, text.Count(len(files), "file", "files"))
		ap, res, ok := reviewRemoval(ctx, t.ws, inv, "rmdir", rel+"/", files, note)
		if !ok {
			return res, nil
		}
		if err := ap.unchanged(); err != nil {
			return tools.ErrorResult("%v", err), nil
		}
		// A file added while the user looked was not reviewed.
		n := 0
		_ = t.ws.Sandbox.WalkDir(abs, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
		if n != len(files) {
			return tools.ErrorResult("%s/ changed while the user was reviewing its deletion (%d files then, %d now); nothing was deleted", rel, len(files), n), nil
		}
		for _, f := range files {
			if err := t.ws.ModifiedError(ctx, f); err != nil {
				return tools.ErrorResult("%v", err), nil
			}
		}
	}
	if err := t.ws.Sandbox.RemoveAll(abs); err != nil {
		return tools.ErrorResult("%s; some entries may already be deleted", workspace.ErrorText(t.ws, abs, err)), nil
	}
	inv.Files.Forget(rel)
	note := t.ws.Record(tag(inv, workspace.UndoEntry{Tool: "rmdir", Op: "rmdir", Path: rel, Existed: true,
		PriorOmitted: fmt.Sprintf("directory with %d files; contents are not kept", len(files))}))
	changed := append([]string{abs}, files[:min(len(files), maxReloadPaths)]...)
	t.ws.Reload(ctx, changed)
	return tools.Result{
		Content: fmt.Sprintf("deleted %s/ with %s\n%s", rel, text.Count(len(files), "file", "files"), note),
		Summary: fmt.Sprintf("deleted %s", text.Count(len(files), "file", "files")),
		Changed: changed,
	}, nil
}
