package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fido-nvim/fido/tools/workspace"
)

// ReviewRequest is a :FidoReview or :FidoRevert from the editor.
type ReviewRequest struct {
	// Action is "open" (:FidoReview) or "revert" (:FidoRevert).
	Action string
	// All reviews the whole conversation instead of its newest changing turn.
	All bool
	// Path is the file to revert in: workspace-relative or absolute.
	Path string
	// Line is the cursor's one-based line, in the before-state when InBefore.
	Line     int
	InBefore bool
	// Whole reverts the whole file (:FidoRevert!).
	Whole  bool
	Reason string
}

// changesOf returns the undo entries of conversation id: all of them, or
// those of its newest turn that changed files (reviews and rewinds do not
// count as changing files, but their entries of that turn are included),
// and that turn.
func (t *editTrust) changesOf(id string, all bool) ([]workspace.UndoEntry, int) {
	var mine []workspace.UndoEntry
	newest := 0
	if t.ws == nil || t.ws.Undo == nil {
		return nil, 0
	}
	for _, e := range t.ws.Undo.Entries() {
		if e.Conv != id {
			continue
		}
		mine = append(mine, e)
		if e.Tool != "review" && e.Tool != "rewind" {
			newest = max(newest, e.Turn)
		}
	}
	if all {
		return mine, newest
	}
	return entriesOfTurn(mine, newest), newest
}

func entriesOfTurn(entries []workspace.UndoEntry, turn int) []workspace.UndoEntry {
	var out []workspace.UndoEntry
	for _, e := range entries {
		if e.Turn == turn {
			out = append(out, e)
		}
	}
	return out
}

// reviewed computes the files of the review rv of conversation id from the
// undo log and the disk now.
func (t *editTrust) reviewed(rv reviewState, id string) ([]*workspace.ChangedFile, []string) {
	entries, _ := t.changesOf(id, true)
	if !rv.all {
		entries = entriesOfTurn(entries, rv.turn)
	}
	return t.ws.ChangedFiles(entries)
}

func (t *editTrust) openReview(all bool, id string, screen Screen, ed EditorSurface) {
	_, turn := t.changesOf(id, all)
	rv := reviewState{all: all, turn: turn}
	files, notes := t.reviewed(rv, id)
	if len(files) == 0 {
		msg := "no file changes of Fido's to review in this conversation"
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, "; ") + ")"
		}
		screen.Notify("Fido: "+msg, LevelInfo)
		return
	}
	t.mu.Lock()
	t.review = &rv
	t.mu.Unlock()
	v := reviewView(files, all)
	v.Notes = notes
	ed.OpenReview(v)
}

// editedMark ends the quickfix text of a hunk someone else changed since.
const editedMark = " (edited since Fido's change)"

func reviewView(files []*workspace.ChangedFile, all bool) ReviewView {
	v := ReviewView{Title: "Fido review: newest turn"}
	if all {
		v.Title = "Fido review: whole conversation"
	}
	for _, f := range files {
		v.Files = append(v.Files, ReviewFile{Path: f.Path, Abs: f.Abs, Before: bufferLines(f.BeforeLines()),
			BeforeExists: f.BeforeExists, Exists: f.Exists})
		whole := ""
		switch {
		case f.Created():
			whole = " (new file)"
		case f.Deleted():
			whole = " (deleted file)"
		}
		if len(f.Hunks) == 0 { // an empty file created or deleted
			v.Items = append(v.Items, ReviewItem{Path: f.Path, Abs: f.Abs, Line: 1, Text: "+0 -0" + whole})
		}
		for _, h := range f.Hunks {
			text := fmt.Sprintf("+%d -%d", h.End-h.Start, len(h.Before)) + whole
			if h.Edited {
				text += editedMark
			}
			v.Items = append(v.Items, ReviewItem{Path: f.Path, Abs: f.Abs, Line: max(h.Start+1, 1), Text: text, Edited: h.Edited})
		}
	}
	return v
}

// bufferLines splits content the way a buffer shows it.
func bufferLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	return out
}

// revertFromReview reverts a hunk or a file of the open review; tag is
// the conversation and its newest turn.
func (t *editTrust) revertFromReview(req ReviewRequest, tag workspace.UndoEntry, running bool, screen Screen, ed EditorSurface) {
	fail := func(msg string) { screen.Notify("FidoRevert: "+msg, LevelWarn) }
	t.mu.Lock()
	rv := t.review
	t.mu.Unlock()
	if rv == nil {
		fail("open :FidoReview first")
		return
	}
	if running {
		fail("a turn is running; wait for it or cancel it first")
		return
	}
	id := tag.Conv
	if !rv.all {
		tag.Turn = rv.turn // the revert belongs to the reviewed turn
	}
	files, _ := t.reviewed(*rv, id)
	var f *workspace.ChangedFile
	for _, c := range files {
		if c.Path == req.Path || c.Abs == req.Path {
			f = c
		}
	}
	if f == nil {
		name := req.Path
		if filepath.IsAbs(name) {
			name = t.ws.Sandbox.Rel(name)
		}
		fail(fmt.Sprintf("no change of Fido's is left in %s (the quickfix list shows where they are)", name))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var desc string
	var err error
	if req.Whole {
		desc, err = t.ws.RevertFile(ctx, f, tag)
	} else {
		var i int
		if i, err = f.FindHunk(req.Line, req.InBefore); err == nil {
			desc, err = t.ws.RevertHunk(ctx, f, i, tag)
		}
	}
	if err != nil {
		fail(err.Error())
		return
	}
	note := f.Path + " " + desc
	if r := strings.TrimSpace(req.Reason); r != "" {
		note += " (reason: " + r + ")"
	}
	t.note(note)
	screen.Notice("reverted " + note)
	files, notes := t.reviewed(*rv, id)
	v := reviewView(files, rv.all)
	v.Notes, v.Refresh = notes, true
	ed.OpenReview(v)
}
