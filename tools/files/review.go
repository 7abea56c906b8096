package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

// maxShownContent bounds the content of one file a review shows;
// maxShownRemovals the deleted files whose content it shows.
const (
	maxShownContent  = 1 << 20
	maxShownRemovals = 50
)

// approval is the state a review saw: what each file held when the user was
// asked. The change is made only if the files still hold it.
type approval struct {
	ws     *workspace.Workspace
	hashes map[string]string // abs -> content hash ("" = absent)
}

// unchanged refuses when a reviewed file changed while the user looked.
func (a approval) unchanged() error {
	for abs, want := range a.hashes {
		got, _, err := a.ws.HashFile(abs)
		if err != nil {
			return errors.New(workspace.ErrorText(a.ws, abs, err))
		}
		if got != want {
			rel := a.ws.Sandbox.Rel(abs)
			return fmt.Errorf("%s changed on disk while the user was reviewing this change; nothing was written. Read %s again and redo the change", rel, rel)
		}
	}
	return nil
}

// askGate shows p through inv.Gate and waits. ok=false means res is the
// model's answer and nothing may be written.
func askGate(ctx context.Context, inv tools.Invocation, tool string, p tools.EditProposal) (res tools.Result, ok bool) {
	p.Tool = tool
	d, err := inv.Gate.Approve(ctx, p)
	switch {
	case tools.Cancelled(ctx, err):
		return tools.ErrorResult("not applied: the turn was cancelled while the user was reviewing this change; nothing was written"), false
	case err != nil:
		return tools.ErrorResult("could not ask the user to review this change: %v; nothing was written", err), false
	case d.Apply:
		return tools.Result{}, true
	}
	msg := "The user rejected this change; nothing was written."
	summary := "rejected by the user"
	if d.Reason != "" {
		msg += " Their reason: " + d.Reason
		summary += ": " + text.Shorten(d.Reason, 80)
	}
	msg += " Do not repeat the same change: take the reason into account, or ask the user (ask_user) what they want instead."
	b, _ := json.Marshal(map[string]string{"rejected": msg})
	return tools.Result{Content: string(b), Summary: summary}, false
}

// shownChange fills a FileChange's content, or a note when it cannot be shown.
func shownChange(fc *tools.FileChange, before, after []byte) {
	switch {
	case len(before) > maxShownContent || len(after) > maxShownContent:
		fc.Note = fmt.Sprintf("too large to show: %d bytes before, %d after", len(before), len(after))
	case bytes.IndexByte(before, 0) >= 0 || bytes.IndexByte(after, 0) >= 0:
		fc.Note = "binary file"
	default:
		fc.Before, fc.After = before, after
	}
}

// reviewPatch runs the operations on copies of the files in a scratch
// directory (the same code as the real run, so the preview is exactly what
// would be written), asks the gate, and returns the state to check before
// writing. ok=false: res is the model's answer.
func (t *patchTool) reviewPatch(ctx context.Context, inv tools.Invocation, p patchParams, abs []string) (approval, tools.Result, bool) {
	ops := p.Operations
	ap := approval{ws: t.ws, hashes: map[string]string{}}
	tmp, err := os.MkdirTemp("", "fido-review-")
	if err != nil {
		return ap, tools.ErrorResult("could not prepare the review: %v; nothing was changed", err), false
	}
	defer os.RemoveAll(tmp)
	sim, err := workspace.New(tmp, nil, nil)
	if err != nil {
		return ap, tools.ErrorResult("could not prepare the review: %v; nothing was changed", err), false
	}
	dry := &patchTool{ws: sim}
	type state struct {
		existed bool
		data    []byte
	}
	before := map[string]*state{}
	var order []string
	touched := map[string]bool{}
	note := ""
	for i, op := range ops {
		rel := t.ws.Sandbox.Rel(abs[i])
		simAbs := filepath.Join(sim.Root, filepath.FromSlash(rel))
		if before[rel] == nil {
			st := &state{}
			fi, err := t.ws.Sandbox.Stat(abs[i])
			if err == nil && fi.Mode().IsRegular() {
				if st.data, err = t.ws.Sandbox.ReadFile(abs[i], maxPatchFileSize); err == nil {
					st.existed = true
					err = workspace.WriteFileAtomic(simAbs, st.data, fi.Mode().Perm())
				}
			}
			if err == nil && !fi.Mode().IsRegular() {
				break // a directory or device: the real run refuses it
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				// No preview (too large to copy, unreadable): still ask,
				// naming the files, rather than write unreviewed.
				res, ok := askGate(ctx, inv, "patch", tools.EditProposal{Summary: p.summary(),
					Files: patchPaths(t.ws, abs), Note: fmt.Sprintf("no preview: %s", workspace.ErrorText(t.ws, abs[i], err))})
				return ap, res, ok
			}
			h := ""
			if st.existed {
				h = workspace.ContentHash(st.data)
			}
			ap.hashes[abs[i]] = h
			before[rel] = st
			order = append(order, rel)
		}
		if !touched[rel] {
			if err := t.ws.CheckSeen(ctx, inv.Files, abs[i], op.Content == nil); err != nil {
				break // refused by the guard: the real run reports it
			}
		}
		if _, _, err := dry.apply(op, simAbs, tools.Invocation{}); err != nil {
			note = fmt.Sprintf("operation %d of %d would fail (%v): only the ones before it would be applied", i+1, len(ops), err)
			break
		}
		touched[rel] = true
	}
	var files []tools.FileChange
	for _, rel := range order {
		if !touched[rel] {
			continue
		}
		st := before[rel]
		after, err := sim.Sandbox.ReadFile(filepath.Join(sim.Root, filepath.FromSlash(rel)), maxPatchFileSize)
		exists := err == nil
		if exists == st.existed && bytes.Equal(after, st.data) {
			continue
		}
		fc := tools.FileChange{Path: rel, Existed: st.existed, Exists: exists}
		shownChange(&fc, st.data, after)
		files = append(files, fc)
	}
	if len(files) == 0 {
		// Nothing would change (the first operation fails or changes
		// nothing): the real run says so without asking.
		return ap, tools.Result{}, true
	}
	res, ok := askGate(ctx, inv, "patch", tools.EditProposal{Summary: p.summary(), Files: files, Note: note})
	return ap, res, ok
}

// patchPaths lists a call's files for a review without a preview.
func patchPaths(ws *workspace.Workspace, abs []string) []tools.FileChange {
	var out []tools.FileChange
	seen := map[string]bool{}
	for _, a := range abs {
		if seen[a] {
			continue
		}
		seen[a] = true
		_, err := ws.Sandbox.Stat(a)
		out = append(out, tools.FileChange{Path: ws.Sandbox.Rel(a), Existed: err == nil, Exists: true, Note: "content not shown"})
	}
	return out
}

// reviewRemoval asks the gate about deleting files (rm, rmdir). ok=false:
// res is the model's answer.
func reviewRemoval(ctx context.Context, ws *workspace.Workspace, inv tools.Invocation, tool, summary string, files []string, note string) (approval, tools.Result, bool) {
	ap := approval{ws: ws, hashes: map[string]string{}}
	var fcs []tools.FileChange
	for _, abs := range files {
		fc := tools.FileChange{Path: ws.Sandbox.Rel(abs), Existed: true}
		fi, err := ws.Sandbox.Lstat(abs)
		switch {
		case err != nil:
			fc.Note = workspace.ErrorText(ws, abs, err)
		case !fi.Mode().IsRegular():
			fc.Note = "not a regular file"
		case fi.Size() > maxShownContent || len(fcs) >= maxShownRemovals:
			fc.Note = fmt.Sprintf("content not shown: %d bytes", fi.Size())
			ap.hashes[abs], _, _ = ws.HashFile(abs)
		default:
			data, err := ws.Sandbox.ReadFile(abs, maxShownContent)
			if err != nil {
				fc.Note = workspace.ErrorText(ws, abs, err)
				break
			}
			ap.hashes[abs] = workspace.ContentHash(data)
			shownChange(&fc, data, nil)
		}
		fcs = append(fcs, fc)
	}
	res, ok := askGate(ctx, inv, tool, tools.EditProposal{Summary: summary, Files: fcs, Note: note})
	return ap, res, ok
}
