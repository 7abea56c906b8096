package agent

import (
	"context"
	"fmt"
	"os"
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

// ReviewView is what the review tab shows.
type ReviewView struct {
	Title string
	Files []ReviewFile
	Items []ReviewItem
	Notes []string
	// Refresh updates the open review tab instead of opening one.
	Refresh bool
}

// ReviewFile is a reviewed file and its before-state (lines without ends).
type ReviewFile struct {
	Path         string
	Abs          string
	Before       []string
	BeforeExists bool
	Exists       bool
}

// ReviewItem is one hunk: a quickfix entry.
type ReviewItem struct {
	Path string
	Abs  string
	Line int
	Text string
}

type reviewState struct {
	all   bool
	files []*workspace.ChangedFile
}

func (s *Session) conversationID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Review handles :FidoReview [all] and :FidoRevert[!] [reason].
func (s *Session) Review(req ReviewRequest) {
	if s.cfg.Workspace == nil || s.cfg.Workspace.Undo == nil {
		s.ui.Notify("Fido: reviewing changes needs the undo log, which is not available", LevelWarn)
		return
	}
	switch req.Action {
	case "open":
		s.openReview(req.All)
	case "revert":
		s.revertFromReview(req)
	default:
		s.ui.Notify(fmt.Sprintf("Fido: unknown review action %q", req.Action), LevelError)
	}
}

// changesOf returns the undo entries of this conversation: all of them, or
// those of its newest turn that changed files.
func (s *Session) changesOf(all bool) []workspace.UndoEntry {
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	var mine []workspace.UndoEntry
	newest := 0
	for _, e := range s.cfg.Workspace.Undo.Entries() {
		if e.Conv != id {
			continue
		}
		mine = append(mine, e)
		newest = max(newest, e.Turn)
	}
	if all {
		return mine
	}
	var out []workspace.UndoEntry
	for _, e := range mine {
		if e.Turn == newest {
			out = append(out, e)
		}
	}
	return out
}

func (s *Session) openReview(all bool) {
	files, notes := s.cfg.Workspace.ChangedFiles(s.changesOf(all))
	if len(files) == 0 {
		msg := "no file changes of Fido's to review in this conversation"
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, "; ") + ")"
		}
		s.ui.Notify("Fido: "+msg, LevelInfo)
		return
	}
	s.mu.Lock()
	s.review = &reviewState{all: all, files: files}
	s.mu.Unlock()
	v := reviewView(files, all)
	v.Notes = notes
	s.ui.OpenReview(v)
}

func reviewView(files []*workspace.ChangedFile, all bool) ReviewView {
	v := ReviewView{Title: "Fido review: newest turn"}
	if all {
		v.Title = "Fido review: whole conversation"
	}
	for _, f := range files {
		v.Files = append(v.Files, ReviewFile{Path: f.Path, Abs: f.Abs, Before: bufferLines(f.Before),
			BeforeExists: f.BeforeExists, Exists: f.BaseExists})
		for _, h := range f.Hunks() {
			text := fmt.Sprintf("+%d -%d", h.B1-h.B0, h.A1-h.A0)
			switch {
			case f.Created():
				text += " (new file)"
			case f.Deleted():
				text += " (deleted file)"
			}
			v.Items = append(v.Items, ReviewItem{Path: f.Path, Abs: f.Abs, Line: max(h.B0+1, 1), Text: text})
		}
	}
	return v
}

// bufferLines splits content the way a buffer shows it.
func bufferLines(b []byte) []string {
	lines := workspace.SplitLines(b)
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	return lines
}

func (s *Session) revertFromReview(req ReviewRequest) {
	fail := func(msg string) { s.ui.Notify("FidoRevert: "+msg, LevelWarn) }
	s.mu.Lock()
	rv, running, tag := s.review, s.running, workspace.UndoEntry{Conv: s.id, Turn: s.turn}
	s.mu.Unlock()
	if rv == nil {
		fail("open :FidoReview first")
		return
	}
	if running {
		fail("a turn is running; wait for it or cancel it first")
		return
	}
	var f *workspace.ChangedFile
	for _, c := range rv.files {
		if c.Path == req.Path || c.Abs == req.Path {
			f = c
		}
	}
	if f == nil {
		fail(fmt.Sprintf("%s is not part of this review", req.Path))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := s.cfg.Workspace
	var desc string
	var err error
	if req.Whole {
		desc, err = ws.RevertFile(ctx, f, tag)
	} else {
		var cur []byte
		if !req.InBefore {
			cur, err = os.ReadFile(f.Abs)
		}
		i := -1
		if err == nil {
			i, err = f.FindHunk(req.Line, req.InBefore, cur)
		}
		if err == nil {
			desc, err = ws.RevertHunk(ctx, f, i, tag)
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
	s.mu.Lock()
	s.revertNotes = append(s.revertNotes, note)
	s.mu.Unlock()
	s.ui.Notice("reverted " + note)
	v := reviewView(rv.files, rv.all)
	v.Refresh = true
	s.ui.OpenReview(v)
}
