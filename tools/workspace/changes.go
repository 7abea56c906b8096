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

// ChangedFile is one file a range of Fido's changes touched, for review:
// its content before the first change of the range, and its content now.
type ChangedFile struct {
	Path         string // workspace-relative
	Abs          string
	Before       []byte
	BeforeExists bool
	// Base is the file as the review compares it: Fido's result (the disk
	// when the review opened), minus the hunks reverted since.
	Base       []byte
	BaseExists bool
}

// Hunks are the changes from Before to Base (A: before, B: base lines).
func (f *ChangedFile) Hunks() []Hunk { return DiffLines(SplitLines(f.Before), SplitLines(f.Base)) }

// Created and Deleted say what Fido did to the file as a whole.
func (f *ChangedFile) Created() bool { return !f.BeforeExists && f.BaseExists }
func (f *ChangedFile) Deleted() bool { return f.BeforeExists && !f.BaseExists }

// ChangedFiles collects the files changed by entries (newest first, as the
// undo log gives them), each with its content before the oldest entry and
// its content on disk now, sorted by path. Files whose prior content was not
// kept, directories, and files that are now as they were are left out; notes
// say why for the first two.
func (ws *Workspace) ChangedFiles(entries []UndoEntry) (files []*ChangedFile, notes []string) {
	oldest := map[string]UndoEntry{}
	for _, e := range entries {
		oldest[e.Path] = e // the last one seen is the oldest
	}
	for rel, e := range oldest {
		abs, err := ws.Sandbox.Resolve(rel)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", rel, err))
			continue
		}
		f := &ChangedFile{Path: rel, Abs: abs}
		switch e.Op {
		case "create":
		case "overwrite", "edit", "rm":
			prior, err := PriorBytes(e)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: %v", rel, err))
				continue
			}
			f.Before, f.BeforeExists = prior, true
		default: // mkdir, rmdir: no file content to review
			if e.Op == "rmdir" {
				notes = append(notes, fmt.Sprintf("%s/: rmdir does not keep the files it deleted", rel))
			}
			continue
		}
		data, err := ws.Sandbox.ReadFile(abs, maxRevertRead)
		switch {
		case err == nil:
			f.Base, f.BaseExists = data, true
		case !errors.Is(err, fs.ErrNotExist):
			notes = append(notes, ErrorText(ws, abs, err))
			continue
		}
		if f.BeforeExists == f.BaseExists && string(f.Before) == string(f.Base) {
			continue
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Strings(notes)
	return files, notes
}

// HunkRange describes a hunk in words for the model: the lines it covers
// in Fido's version.
func HunkRange(h Hunk) string {
	switch {
	case h.B1-h.B0 > 1:
		return fmt.Sprintf("lines %d-%d", h.B0+1, h.B1)
	case h.B1-h.B0 == 1:
		return fmt.Sprintf("line %d", h.B0+1)
	}
	return fmt.Sprintf("the lines deleted after line %d", h.B0)
}

// FindHunk picks the hunk at (or next to) a one-based line: of the current
// file (mapped through the user's edits since), or of the before-state when
// inBefore.
func (f *ChangedFile) FindHunk(line int, inBefore bool, current []byte) (int, error) {
	hunks := f.Hunks()
	if len(hunks) == 0 {
		return -1, errors.New("no change of Fido's is left in this file")
	}
	l := line - 1
	if !inBefore {
		// Map the line of the current file to the base.
		mapped, ok := mapLine(DiffLines(SplitLines(f.Base), SplitLines(current)), l)
		if !ok {
			return -1, fmt.Errorf("line %d was edited after Fido's change; nothing to revert there", line)
		}
		l = mapped
	}
	best, dist := -1, 2
	for i, h := range hunks {
		from, to := h.B0, h.B1
		if inBefore {
			from, to = h.A0, h.A1
		}
		var d int
		switch {
		case to == from: // a deletion point: the lines around it are on it
			d = min(absInt(l-from), absInt(l-from+1))
		case l < from:
			d = from - l
		case l >= to:
			d = l - to + 1
		}
		if d < dist {
			best, dist = i, d
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("no change of Fido's at line %d (the quickfix list shows where they are)", line)
	}
	return best, nil
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// mapLine maps a line of b to a of the diff a→b; ok is false inside a change.
func mapLine(hunks []Hunk, l int) (int, bool) {
	shift := 0
	for _, h := range hunks {
		if l < h.B0 {
			break
		}
		if l < h.B1 {
			return 0, false
		}
		shift = h.A1 - h.B1
	}
	return l + shift, true
}

// RevertHunk puts hunk i of f back as it was before Fido's change, keeping
// every other change in the file, the user's edits since included (a 3-way
// merge: base = Fido's result, ours = the disk). When the user edited the
// hunk itself since, it refuses. The file is written atomically, its
// buffer reloaded, the revert recorded in the undo log with tag's Conv and
// Turn; f.Base loses the hunk. It returns the hunk's description.
func (ws *Workspace) RevertHunk(ctx context.Context, f *ChangedFile, i int, tag UndoEntry) (string, error) {
	hunks := f.Hunks()
	if i < 0 || i >= len(hunks) {
		return "", errors.New("that change is no longer there")
	}
	h := hunks[i]
	if err := ws.ModifiedError(ctx, f.Abs); err != nil {
		return "", err
	}
	cur, err := ws.Sandbox.ReadFile(f.Abs, maxRevertRead)
	if err != nil {
		return "", errors.New(ErrorText(ws, f.Abs, err))
	}
	before, base, now := SplitLines(f.Before), SplitLines(f.Base), SplitLines(cur)
	start := h.B0
	for _, g := range DiffLines(base, now) {
		touches := g.A0 < h.B1 && g.A1 > h.B0 || // overlaps the hunk
			g.A0 == g.A1 && g.A0 > h.B0 && g.A0 < h.B1 || // inserted inside it
			h.B0 == h.B1 && g.A0 <= h.B0 && g.A1 >= h.B0 && g.A1 > g.A0 // edits where Fido deleted
		if touches {
			return "", fmt.Errorf("%s %s was edited after Fido's change; revert it by hand (or with :FidoRevert! for the whole file)", f.Path, HunkRange(h))
		}
		if g.A1 <= h.B0 && (g.A0 < h.B0 || g.A0 == g.A1) {
			start += (g.B1 - g.B0) - (g.A1 - g.A0)
		}
	}
	out := strings.Join(now[:start], "") + strings.Join(before[h.A0:h.A1], "") + strings.Join(now[start+h.B1-h.B0:], "")
	if err := ws.writeReverted(f, cur, []byte(out), true, tag); err != nil {
		return "", err
	}
	f.Base = []byte(strings.Join(base[:h.B0], "") + strings.Join(before[h.A0:h.A1], "") + strings.Join(base[h.B1:], ""))
	ws.Reload(ctx, []string{f.Abs})
	return HunkRange(h), nil
}

// RevertFile puts the whole file back as it was before Fido's changes: a
// file Fido created is deleted, one it deleted is restored. It refuses when
// the user changed the file since the review opened (their edits would be
// lost). It returns a description.
func (ws *Workspace) RevertFile(ctx context.Context, f *ChangedFile, tag UndoEntry) (string, error) {
	if err := ws.ModifiedError(ctx, f.Abs); err != nil {
		return "", err
	}
	cur, err := ws.Sandbox.ReadFile(f.Abs, maxRevertRead)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", errors.New(ErrorText(ws, f.Abs, err))
	}
	if exists != f.BaseExists || string(cur) != string(f.Base) {
		return "", fmt.Errorf("%s was changed after Fido's change (or after the review opened); revert single hunks (:FidoRevert), or reopen :FidoReview", f.Path)
	}
	desc := "the whole file, as it was before Fido's changes"
	if !f.BeforeExists {
		desc = "the file Fido created (deleted it)"
		if err := ws.Sandbox.Remove(f.Abs); err != nil {
			return "", errors.New(ErrorText(ws, f.Abs, err))
		}
		e := tag
		e.Tool, e.Op, e.Path = "review", "rm", f.Path
		PriorContent(&e, cur)
		ws.Record(e)
	} else {
		if !exists {
			desc = "the file Fido deleted (restored it)"
			if _, err := ws.Sandbox.MkdirAll(filepath.Dir(f.Abs), 0o755); err != nil {
				return "", errors.New(ErrorText(ws, filepath.Dir(f.Abs), err))
			}
		}
		if err := ws.writeReverted(f, cur, f.Before, exists, tag); err != nil {
			return "", err
		}
	}
	f.Base, f.BaseExists = f.Before, f.BeforeExists
	ws.Reload(ctx, []string{f.Abs})
	return desc, nil
}

// writeReverted writes a reverted file atomically and records it in the
// undo log (so /undo and a second review see it).
func (ws *Workspace) writeReverted(f *ChangedFile, cur, out []byte, existed bool, tag UndoEntry) error {
	perm := fs.FileMode(0o644)
	if fi, err := ws.Sandbox.Stat(f.Abs); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := ws.Sandbox.WriteFileAtomic(f.Abs, out, perm); err != nil {
		return errors.New(ErrorText(ws, f.Abs, err))
	}
	e := tag
	e.Tool, e.Path, e.After = "review", f.Path, ContentHash(out)
	e.Op = "create"
	if existed {
		e.Op = "edit"
		PriorContent(&e, cur)
		e.PriorMode = perm
	}
	ws.Record(e)
	return nil
}
