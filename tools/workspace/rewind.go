package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// RewindStep is one file (or directory) a rewind puts back.
type RewindStep struct {
	Path string // workspace-relative
	Abs  string
	// Content is what the file is to hold: Fido's changes since the rewind
	// point put back, everyone else's lines as they are now; Exists false
	// means it is deleted. Dir marks a directory mkdir made.
	Content []byte
	Exists  bool
	Dir     bool
	Mode    fs.FileMode
	// was is the hash of the file when the rewind was planned ("" when
	// absent): the step writes only over that.
	was string
}

// RewindPlan is what a rewind would do: steps to apply and files skipped
// (path: why), never overwritten.
type RewindPlan struct {
	Steps   []RewindStep
	Skipped []string
}

// PlanRewind works out how to take back every change of entries (newest
// first, as the undo log lists them) — Fido's own lines only: each file
// gets the hunks Fido wrote since put back as they were (the 3-way merge
// of ChangedFile), everyone else's edits kept. A file where someone else
// edited one of Fido's hunks, one Fido created that was changed since, one
// deleted since, one with unsaved changes, and one whose history the log
// cannot tell are skipped and listed, never overwritten. Files already in
// their earlier state need nothing.
func (ws *Workspace) PlanRewind(ctx context.Context, entries []UndoEntry) RewindPlan {
	byPath, order := chainsOf(entries)
	var plan RewindPlan
	skip := func(rel, why string) { plan.Skipped = append(plan.Skipped, rel+": "+why) }
	var dirs []RewindStep
	for _, rel := range order {
		chain := byPath[rel]
		oldest := chain[0]
		abs, err := ws.Sandbox.Resolve(rel)
		if err != nil {
			skip(rel, err.Error())
			continue
		}
		switch {
		case oldest.Op == "mkdir":
			if fi, err := ws.Sandbox.Lstat(abs); err != nil || !fi.IsDir() {
				continue // already gone
			}
			if _, err := ws.onlyEmptyDirs(abs); err != nil {
				skip(rel+"/", err.Error())
				continue
			}
			dirs = append(dirs, RewindStep{Path: rel, Abs: abs, Dir: true})
			continue
		case oldest.Op == "rmdir":
			skip(rel+"/", "rmdir does not keep the files it deleted")
			continue
		case dirOp(chain):
			skip(rel, "a directory operation came after it")
			continue
		}
		switch oldest.Op {
		case "create", "overwrite", "edit", "rm":
		default:
			skip(rel, fmt.Sprintf("unknown operation %q", oldest.Op))
			continue
		}
		f, err := ws.ChangedFile(rel, chain)
		if err != nil {
			skip(rel, err.Error())
			continue
		}
		step := RewindStep{Path: rel, Abs: abs, Exists: f.BeforeExists, Mode: modeOr(f.Mode), was: f.disk}
		switch {
		case !f.Exists && !f.FidoDeleted:
			if f.BeforeExists {
				skip(rel, "deleted since Fido's change (kept deleted)")
			}
			continue
		case f.Edited():
			skip(rel, editedText(f.Hunks)+" edited after Fido's change (kept as it is)")
			continue
		case f.Created() && f.Others:
			skip(rel, "Fido created it and it was changed since by someone else (kept as it is)")
			continue
		case !f.BeforeExists && !f.Exists:
			continue // created and deleted again: nothing to do
		}
		if f.BeforeExists {
			step.Content = []byte(strings.Join(f.BeforeLines(), ""))
			if f.Exists && len(f.Hunks) == 0 {
				continue // already as it was
			}
		}
		if f.Exists {
			if fi, err := ws.Sandbox.Stat(abs); err == nil {
				step.Mode = fi.Mode().Perm()
			}
			if err := ws.ModifiedError(ctx, abs); err != nil {
				skip(rel, "its buffer has unsaved changes")
				continue
			}
		}
		plan.Steps = append(plan.Steps, step)
	}
	// Directories last, deepest first, once the files in them are gone.
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i].Path) > len(dirs[j].Path) })
	plan.Steps = append(plan.Steps, dirs...)
	return plan
}

// ApplyRewind carries out a plan's steps, each recorded in the undo log
// (tool "rewind", tagged like tag), and reloads the buffers. A file that
// changed since the plan was made (while the user read it) is not touched
// and reported. It returns what it did and what failed, one line each.
func (ws *Workspace) ApplyRewind(ctx context.Context, plan RewindPlan, tag UndoEntry) (done, failed []string) {
	var changed []string
	for _, st := range plan.Steps {
		if err := ws.applyRewindStep(ctx, st, tag); err != nil {
			failed = append(failed, st.Path+": "+err.Error())
			continue
		}
		changed = append(changed, st.Abs)
		switch {
		case st.Dir:
			done = append(done, "removed "+st.Path+"/")
		case !st.Exists:
			done = append(done, "deleted "+st.Path)
		default:
			done = append(done, "restored "+st.Path)
		}
	}
	ws.Reload(ctx, changed)
	return done, failed
}

func (ws *Workspace) applyRewindStep(ctx context.Context, st RewindStep, tag UndoEntry) error {
	e := tag
	e.Tool, e.Path = "rewind", st.Path
	if st.Dir {
		dirs, err := ws.onlyEmptyDirs(st.Abs)
		if err != nil {
			return err
		}
		// Deepest first, each with rmdir: a file that appears meanwhile stops
		// the removal instead of being deleted with the tree.
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := ws.Sandbox.Remove(dirs[i]); err != nil {
				return errors.New(ErrorText(ws, dirs[i], err))
			}
		}
		e.Op, e.Existed = "rmdir", true
		e.PriorOmitted = "an empty directory"
		ws.Record(e)
		return nil
	}
	cur, err := ws.Sandbox.ReadFile(st.Abs, maxRevertRead)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errors.New(ErrorText(ws, st.Abs, err))
	}
	now := ""
	if existed {
		now = ContentHash(cur)
	}
	if now != st.was {
		return errors.New("changed since the rewind was planned; nothing was written")
	}
	if existed {
		if err := ws.ModifiedError(ctx, st.Abs); err != nil {
			return err
		}
		PriorContent(&e, cur)
		e.PriorMode = st.Mode
	}
	if !st.Exists {
		if err := ws.Sandbox.Remove(st.Abs); err != nil {
			return errors.New(ErrorText(ws, st.Abs, err))
		}
		e.Op = "rm"
		ws.Record(e)
		return nil
	}
	top, err := ws.Sandbox.MkdirAll(filepath.Dir(st.Abs), 0o755)
	if err != nil {
		return errors.New(ErrorText(ws, filepath.Dir(st.Abs), err))
	}
	e.Op, e.After = "create", ContentHash(st.Content)
	if existed {
		e.Op = "overwrite"
	}
	SetWrote(&e, cur, st.Content)
	ws.BeginUndo(&e)
	if err := ws.Sandbox.WriteFileAtomic(st.Abs, st.Content, st.Mode); err != nil {
		ws.AbortUndo(e)
		ws.RemoveEmptyDirs(filepath.Dir(st.Abs), top)
		return errors.New(ErrorText(ws, st.Abs, err))
	}
	ws.Record(e)
	return nil
}

// RewindSummary words a plan in one line for the transcript.
func RewindSummary(plan RewindPlan) string {
	var parts []string
	if len(plan.Steps) > 0 {
		var names []string
		for _, st := range plan.Steps {
			n := st.Path
			switch {
			case st.Dir:
				n += "/ (remove)"
			case !st.Exists:
				n += " (delete)"
			}
			names = append(names, n)
		}
		parts = append(parts, "will restore: "+strings.Join(names, ", "))
	} else {
		parts = append(parts, "no file to restore")
	}
	if len(plan.Skipped) > 0 {
		parts = append(parts, "will skip (never overwritten): "+strings.Join(plan.Skipped, "; "))
	}
	return strings.Join(parts, "; ")
}
