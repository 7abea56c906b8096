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
	// Content is what the file held at the rewind point; Exists false means
	// it did not exist then (it is deleted). Dir marks a directory mkdir made.
	Content []byte
	Exists  bool
	Dir     bool
	Mode    fs.FileMode
}

// RewindPlan is what a rewind would do: steps to apply and files skipped
// (path: why), never overwritten.
type RewindPlan struct {
	Steps   []RewindStep
	Skipped []string
}

// PlanRewind works out how to put every file changed by entries (newest
// first, as the undo log lists them) back to its content before the oldest
// of them. A file whose disk state is not what Fido's newest change left
// (the user edited it since), or whose earlier content was not kept, is
// skipped and listed. Files already in their earlier state need nothing.
func (ws *Workspace) PlanRewind(ctx context.Context, entries []UndoEntry) RewindPlan {
	type chain struct{ newest, oldest UndoEntry }
	chains := map[string]*chain{}
	var order []string
	for _, e := range entries {
		c := chains[e.Path]
		if c == nil {
			c = &chain{newest: e}
			chains[e.Path] = c
			order = append(order, e.Path)
		}
		c.oldest = e
	}
	var plan RewindPlan
	skip := func(rel, why string) { plan.Skipped = append(plan.Skipped, rel+": "+why) }
	var dirs []RewindStep
	for _, rel := range order {
		c := chains[rel]
		abs, err := ws.Sandbox.Resolve(rel)
		if err != nil {
			skip(rel, err.Error())
			continue
		}
		step := RewindStep{Path: rel, Abs: abs}
		switch c.oldest.Op {
		case "create":
		case "overwrite", "edit", "rm":
			prior, err := PriorBytes(c.oldest)
			if err != nil {
				skip(rel, err.Error())
				continue
			}
			step.Content, step.Exists, step.Mode = prior, true, modeOr(c.oldest.PriorMode)
		case "mkdir":
			step.Dir = true
			if fi, err := ws.Sandbox.Lstat(abs); err != nil || !fi.IsDir() {
				continue // already gone
			}
			if _, err := ws.onlyEmptyDirs(abs); err != nil {
				skip(rel+"/", err.Error())
				continue
			}
			dirs = append(dirs, step)
			continue
		case "rmdir":
			skip(rel+"/", "rmdir does not keep the files it deleted")
			continue
		default:
			skip(rel, fmt.Sprintf("unknown operation %q", c.oldest.Op))
			continue
		}
		if c.newest.Op == "rmdir" || c.newest.Op == "mkdir" {
			skip(rel, "a directory operation came after it")
			continue
		}
		hash, exists, err := ws.HashFile(abs)
		if err != nil {
			skip(rel, ErrorText(ws, abs, err))
			continue
		}
		if exists == step.Exists && (!exists || hash == ContentHash(step.Content)) {
			continue // already as it was
		}
		wantExists := c.newest.Op != "rm"
		if exists != wantExists || exists && hash != c.newest.After {
			skip(rel, "changed since Fido's last change (kept as it is)")
			continue
		}
		if err := ws.ModifiedError(ctx, abs); err != nil {
			skip(rel, "its buffer has unsaved changes")
			continue
		}
		plan.Steps = append(plan.Steps, step)
	}
	// Directories last, deepest first, once the files in them are gone.
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i].Path) > len(dirs[j].Path) })
	plan.Steps = append(plan.Steps, dirs...)
	return plan
}

// ApplyRewind carries out a plan's steps, each recorded in the undo log
// (tool "rewind", tagged like tag), and reloads the buffers. It returns what
// it did and what failed, one line each.
func (ws *Workspace) ApplyRewind(ctx context.Context, plan RewindPlan, tag UndoEntry) (done, failed []string) {
	var changed []string
	for _, st := range plan.Steps {
		if err := ws.applyRewindStep(st, tag); err != nil {
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

func (ws *Workspace) applyRewindStep(st RewindStep, tag UndoEntry) error {
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
	if existed {
		PriorContent(&e, cur)
	}
	if !st.Exists {
		if err := ws.Sandbox.Remove(st.Abs); err != nil {
			return errors.New(ErrorText(ws, st.Abs, err))
		}
		e.Op = "rm"
		ws.Record(e)
		return nil
	}
	if _, err := ws.Sandbox.MkdirAll(filepath.Dir(st.Abs), 0o755); err != nil {
		return errors.New(ErrorText(ws, filepath.Dir(st.Abs), err))
	}
	if err := ws.Sandbox.WriteFileAtomic(st.Abs, st.Content, st.Mode); err != nil {
		return errors.New(ErrorText(ws, st.Abs, err))
	}
	e.Op, e.After = "create", ContentHash(st.Content)
	if existed {
		e.Op = "overwrite"
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
