package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// ChangedFile is one file a range of Fido's changes touched, as a review
// sees it: the regions Fido wrote that are still there, told apart from
// everyone else's edits by what the undo log says each change wrote (not
// by a diff of the file against its content before Fido).
type ChangedFile struct {
	Path string // workspace-relative
	Abs  string
	// BeforeExists says the file existed before the range's first change.
	BeforeExists bool
	// Exists says it exists now; Lines is its content now.
	Exists bool
	Lines  []string
	// Hunks are Fido's regions of Lines, in order.
	Hunks []FidoHunk
	// FidoDeleted says Fido's last change deleted the file and it is
	// still absent.
	FidoDeleted bool
	// Others says someone else (the user, another program or
	// conversation) changed the file during or after the range.
	Others bool
	// Mode is the file's permission bits before the range (0: unknown).
	Mode fs.FileMode
	// disk is the hash of the content read ("" when absent), so a revert
	// writes only over what the review saw.
	disk string
}

// Created and Deleted say what Fido did to the file as a whole.
func (f *ChangedFile) Created() bool { return !f.BeforeExists && f.Exists }
func (f *ChangedFile) Deleted() bool { return f.BeforeExists && f.FidoDeleted }

// BeforeLines is the file without Fido's changes: every hunk put back as
// it was, everyone else's lines as they are now.
func (f *ChangedFile) BeforeLines() []string {
	if !f.BeforeExists {
		return nil
	}
	return RevertHunks(f.Lines, f.Hunks, nil)
}

// Edited says whether someone else changed one of Fido's hunks since.
func (f *ChangedFile) Edited() bool {
	for _, h := range f.Hunks {
		if h.Edited {
			return true
		}
	}
	return false
}

// ChangedFiles reviews the files changed by entries (newest first, as the
// undo log gives them), sorted by path. Files where nothing of Fido's is
// left, directories, and files whose history the log cannot tell are left
// out; notes say why for the last two and for files deleted since.
func (ws *Workspace) ChangedFiles(entries []UndoEntry) (files []*ChangedFile, notes []string) {
	byPath, order := chainsOf(entries)
	for _, rel := range order {
		chain := byPath[rel]
		if dirOp(chain) {
			if chain[0].Op == "rmdir" || chain[len(chain)-1].Op == "rmdir" {
				notes = append(notes, fmt.Sprintf("%s/: rmdir does not keep the files it deleted", rel))
			}
			continue
		}
		f, err := ws.ChangedFile(rel, chain)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", rel, err))
			continue
		}
		switch {
		case !f.Exists && !f.FidoDeleted:
			if f.BeforeExists {
				notes = append(notes, fmt.Sprintf("%s: deleted since Fido's change", rel))
			}
			continue
		case len(f.Hunks) == 0 && !f.Created() && !f.Deleted():
			continue
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Strings(notes)
	return files, notes
}

// chainsOf groups entries (newest first) by path, each chain oldest first.
func chainsOf(entries []UndoEntry) (map[string][]UndoEntry, []string) {
	byPath := map[string][]UndoEntry{}
	var order []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if _, ok := byPath[e.Path]; !ok {
			order = append(order, e.Path)
		}
		byPath[e.Path] = append(byPath[e.Path], e)
	}
	return byPath, order
}

func dirOp(chain []UndoEntry) bool {
	for _, e := range chain {
		if e.Op == "mkdir" || e.Op == "rmdir" {
			return true
		}
	}
	return false
}

// version is a file's state: its content, or absent.
type version struct {
	data   []byte
	exists bool
}

func (v version) same(w version) bool { return v.exists == w.exists && bytes.Equal(v.data, w.data) }

// priorOf is the file before e's change.
func priorOf(e UndoEntry) (version, error) {
	if e.Op == "create" {
		return version{}, nil
	}
	prior, err := PriorBytes(e)
	if err != nil {
		return version{}, fmt.Errorf("the content before Fido's %s was not kept (%v)", e.Op, err)
	}
	return version{prior, true}, nil
}

// ChangedFile follows the file rel through chain (its undo entries, oldest
// first) and the disk now: each entry's prior content and what it wrote
// are Fido's versions, every difference between one entry's result and the
// next one's prior content (or the disk) is someone else's change. It
// fails when the log does not hold enough to tell them apart.
func (ws *Workspace) ChangedFile(rel string, chain []UndoEntry) (*ChangedFile, error) {
	abs, err := ws.Sandbox.Resolve(rel)
	if err != nil {
		return nil, err
	}
	f := &ChangedFile{Path: rel, Abs: abs}
	data, err := ws.Sandbox.ReadFile(abs, maxRevertRead)
	disk := version{data, err == nil}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New(ErrorText(ws, abs, err))
	}
	if len(chain) == 0 {
		return nil, errors.New("no change of Fido's")
	}
	before, err := priorOf(chain[0])
	if err != nil {
		return nil, err
	}
	cur := before
	var steps []Step
	for k, e := range chain {
		prior, err := priorOf(e)
		if err != nil {
			return nil, err
		}
		if !prior.same(cur) {
			steps = append(steps, Step{Lines: SplitLines(prior.data)})
			f.Others = true
		}
		next := disk
		if k+1 < len(chain) {
			if next, err = priorOf(chain[k+1]); err != nil {
				return nil, err
			}
		}
		var after version
		if e.Op != "rm" {
			wrote, ok := WroteBytes(e, prior.data)
			switch {
			case ok:
				after = version{wrote, true}
			case e.After != "" && next.exists && ContentHash(next.data) == e.After:
				after = next
			default:
				return nil, errors.New("the undo log does not say what Fido wrote (an entry of an older Fido, or its content was dropped) and the file was changed since; compare it by hand")
			}
		}
		if e.Pending && !next.same(after) && next.same(prior) {
			continue // Fido stopped before making this change
		}
		steps = append(steps, Step{Lines: SplitLines(after.data), Fido: true})
		cur = after
	}
	if !disk.same(cur) {
		steps = append(steps, Step{Lines: SplitLines(disk.data)})
		f.Others = true
	}
	f.BeforeExists, f.Exists, f.FidoDeleted = before.exists, disk.exists, !cur.exists && !disk.exists
	f.Mode = chain[0].PriorMode
	f.Lines = SplitLines(disk.data)
	f.Hunks = TrackHunks(SplitLines(before.data), steps)
	if disk.exists {
		f.disk = ContentHash(disk.data)
	}
	return f, nil
}

// FindHunk picks the hunk at a one-based line: of the file now, or of its
// before-state (BeforeLines) when inBefore. A hunk that deleted lines is
// at the lines on either side of the point.
func (f *ChangedFile) FindHunk(line int, inBefore bool) (int, error) {
	if len(f.Hunks) == 0 {
		return -1, fmt.Errorf("no change of Fido's is left in %s", f.Path)
	}
	l := line - 1
	best := -1
	for i, h := range f.Hunks {
		from, to := h.Start, h.End
		if inBefore {
			from, to = BeforeRange(f.Hunks, i)
		}
		switch {
		case from < to && l >= from && l < to:
			return i, nil // inside: the best there is
		case from == to && (l == from-1 || l == from) && best < 0:
			best = i
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("no change of Fido's at %s line %d (the quickfix list shows where they are)", f.Path, line)
	}
	return best, nil
}

// current checks that f's file is still what the review read and has no
// unsaved buffer, and returns its content.
func (ws *Workspace) current(ctx context.Context, f *ChangedFile) ([]byte, error) {
	if err := ws.ModifiedError(ctx, f.Abs); err != nil {
		return nil, err
	}
	cur, err := ws.Sandbox.ReadFile(f.Abs, maxRevertRead)
	switch {
	case err == nil:
		if ContentHash(cur) == f.disk && f.Exists {
			return cur, nil
		}
	case errors.Is(err, fs.ErrNotExist):
		if !f.Exists {
			return nil, nil
		}
	default:
		return nil, errors.New(ErrorText(ws, f.Abs, err))
	}
	return nil, fmt.Errorf("%s changed on disk while Fido was reverting; nothing was changed: try again", f.Path)
}

// RevertHunk puts Fido's hunk i of f back as it was before Fido's change
// and leaves every other line as it is now: the other hunks, and everyone
// else's edits. A hunk someone else edited since is refused (its lines are
// no longer Fido's alone). For a file Fido created or deleted it reverts
// the whole file (RevertFile). The file is written atomically, its buffer
// reloaded, the revert recorded in the undo log with tag's Conv and Turn.
// It returns the hunk's place in words.
func (ws *Workspace) RevertHunk(ctx context.Context, f *ChangedFile, i int, tag UndoEntry) (string, error) {
	if i < 0 || i >= len(f.Hunks) {
		return "", errors.New("that change is no longer there")
	}
	h := f.Hunks[i]
	if h.Edited {
		return "", fmt.Errorf("%s %s was edited after Fido's change, so it is no longer Fido's alone; nothing was changed (revert it by hand: the review shows the text before Fido beside it)", f.Path, LinesText(h))
	}
	if f.Created() || f.Deleted() {
		return ws.RevertFile(ctx, f, tag)
	}
	cur, err := ws.current(ctx, f)
	if err != nil {
		return "", err
	}
	out := RevertHunks(f.Lines, f.Hunks, func(j int) bool { return j != i })
	if err := ws.writeReverted(f, cur, []byte(strings.Join(out, "")), true, tag); err != nil {
		return "", err
	}
	ws.Reload(ctx, []string{f.Abs})
	return LinesText(h), nil
}

// RevertFile puts back every hunk of Fido's in f and leaves everyone
// else's lines as they are now: a file Fido created is deleted, one it
// deleted is restored. It refuses, changing nothing, when someone else
// edited one of Fido's hunks, or changed a file Fido created (deleting it
// would lose their lines). It returns a description.
func (ws *Workspace) RevertFile(ctx context.Context, f *ChangedFile, tag UndoEntry) (string, error) {
	if f.Edited() {
		return "", fmt.Errorf("%s: %s edited after Fido's change; nothing was changed. Revert Fido's other hunks one by one (:FidoRevert), or edit the file by hand", f.Path, editedText(f.Hunks))
	}
	if f.Created() && f.Others {
		return "", fmt.Errorf("%s: Fido created it and it was changed since by someone else, so deleting it would lose their lines; nothing was changed (delete it by hand if you want it gone)", f.Path)
	}
	cur, err := ws.current(ctx, f)
	if err != nil {
		return "", err
	}
	desc := "the whole file, as it was before Fido's changes"
	switch {
	case f.Created():
		desc = "the file Fido created (deleted it)"
		if err := ws.Sandbox.Remove(f.Abs); err != nil {
			return "", errors.New(ErrorText(ws, f.Abs, err))
		}
		e := tag
		e.Tool, e.Op, e.Path = "review", "rm", f.Path
		PriorContent(&e, cur)
		ws.Record(e)
	case f.Deleted():
		desc = "the file Fido deleted (restored it)"
		if _, err := ws.Sandbox.MkdirAll(filepath.Dir(f.Abs), 0o755); err != nil {
			return "", errors.New(ErrorText(ws, filepath.Dir(f.Abs), err))
		}
		if err := ws.writeReverted(f, nil, []byte(strings.Join(f.BeforeLines(), "")), false, tag); err != nil {
			return "", err
		}
	case !f.Exists:
		return "", fmt.Errorf("%s was deleted since Fido's change; nothing was changed", f.Path)
	default:
		if err := ws.writeReverted(f, cur, []byte(strings.Join(f.BeforeLines(), "")), true, tag); err != nil {
			return "", err
		}
	}
	ws.Reload(ctx, []string{f.Abs})
	return desc, nil
}

// writeReverted writes a reverted file atomically and records it in the
// undo log (so /undo and a second review see it), before the write as
// patch does, so a crash in between still leaves the entry.
func (ws *Workspace) writeReverted(f *ChangedFile, cur, out []byte, existed bool, tag UndoEntry) error {
	perm := modeOr(f.Mode)
	if fi, err := ws.Sandbox.Stat(f.Abs); err == nil {
		perm = fi.Mode().Perm()
	}
	e := tag
	e.Tool, e.Path, e.After = "review", f.Path, ContentHash(out)
	e.Op = "create"
	if existed {
		e.Op = "edit"
		PriorContent(&e, cur)
		e.PriorMode = perm
	}
	SetWrote(&e, cur, out)
	ws.BeginUndo(&e)
	if err := ws.Sandbox.WriteFileAtomic(f.Abs, out, perm); err != nil {
		ws.AbortUndo(e)
		return errors.New(ErrorText(ws, f.Abs, err))
	}
	ws.Record(e)
	return nil
}
