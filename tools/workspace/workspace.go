package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/text"
)

// Workspace is what the workspace tools share: the sandboxed root, the
// editor hosting Fido (may be nil) and the undo log (may be nil).
type Workspace struct {
	Root    string // absolute, symlinks resolved
	Sandbox *Sandbox
	Editor  tools.Editor
	Undo    *UndoLog
}

// New opens the workspace rooted at root, an existing directory.
// editor and undo may be nil (no editor integration, no undo log).
func New(root string, editor tools.Editor, undo *UndoLog) (*Workspace, error) {
	sb, err := NewSandbox(root)
	if err != nil {
		return nil, err
	}
	return &Workspace{Root: sb.Root(), Sandbox: sb, Editor: editor, Undo: undo}, nil
}

// ModifiedError returns a model-facing refusal when the editor has unsaved
// changes for abs; nil when it has none or there is no editor.
func (ws *Workspace) ModifiedError(ctx context.Context, abs string) error {
	if ws.Editor == nil {
		return nil
	}
	mod, err := ws.Editor.Modified(ctx, abs)
	if err != nil {
		return fmt.Errorf("could not ask the editor whether %s has unsaved changes: %v; nothing was changed", ws.Sandbox.Rel(abs), err)
	}
	if mod {
		return fmt.Errorf("%s has unsaved changes in an editor buffer; the user must save (:w) or discard them first; nothing was changed", ws.Sandbox.Rel(abs))
	}
	return nil
}

// Reload asks the editor to show the new disk state of paths.
func (ws *Workspace) Reload(ctx context.Context, paths []string) {
	if ws.Editor != nil && len(paths) > 0 {
		ws.Editor.Reload(ctx, paths)
	}
}

// BeginUndo writes e to the undo log as pending before the change it
// describes, so the change is undoable even if Fido dies right after it.
// When the log cannot be written, e stays unrecorded and Record tries again
// after the change.
func (ws *Workspace) BeginUndo(e *UndoEntry) {
	if ws.Undo != nil && ws.Undo.Begin(e) != nil {
		e.ID, e.Pending = "", false
	}
}

// AbortUndo removes the pending entry of a change that failed.
func (ws *Workspace) AbortUndo(e UndoEntry) {
	if ws.Undo != nil && e.Pending {
		_ = ws.Undo.Abort(e)
	}
}

// Record adds an undo entry after its change, or confirms the one BeginUndo
// wrote; the returned note is appended to the tool result when the log could
// not be written (the change itself stands).
func (ws *Workspace) Record(e UndoEntry) string {
	if ws.Undo == nil {
		return ""
	}
	var err error
	if e.Pending {
		err = ws.Undo.Confirm(e)
	} else {
		err = ws.Undo.Record(e)
	}
	if err != nil {
		return fmt.Sprintf("\nwarning: the undo log could not be written: %v", err)
	}
	return ""
}

// RecordPrior fills e's prior-content fields from the file at abs, reading
// at most MaxUndoContent bytes of it.
func (ws *Workspace) RecordPrior(e *UndoEntry, abs string) {
	f, fi, err := ws.Sandbox.Open(abs)
	if err != nil {
		return
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return
	}
	e.PriorMode = fi.Mode().Perm()
	if fi.Size() > MaxUndoContent {
		e.Existed, e.PriorSize = true, fi.Size()
		e.PriorOmitted = fmt.Sprintf("too large: %d bytes (the undo log keeps at most %d bytes per file)", fi.Size(), MaxUndoContent)
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxUndoContent+1))
	if err != nil {
		e.Existed, e.PriorSize = true, fi.Size()
		e.PriorOmitted = fmt.Sprintf("could not be read: %v", err)
		return
	}
	PriorContent(e, data)
}

// RemoveEmptyDirs removes dir and its parents up to top (both absolute), as
// long as they are empty: what a failed write leaves of the directories
// MkdirAll created for it (top == "" means none were created).
func (ws *Workspace) RemoveEmptyDirs(dir, top string) {
	if top == "" {
		return
	}
	for d := dir; ws.Sandbox.Contains(d) && d != ws.Root && len(d) >= len(top); d = filepath.Dir(d) {
		if ws.Sandbox.Remove(d) != nil {
			return
		}
	}
}

// rootOps names os.Root's *at operations the way users know them.
var rootOps = map[string]string{
	"openat": "open", "statat": "stat", "lstatat": "lstat", "mkdirat": "mkdir",
	"removeat": "remove", "readlinkat": "readlink", "renameat": "rename",
}

// ErrorText words an OS error about a workspace path for the model.
func ErrorText(ws *Workspace, abs string, err error) string {
	rel := text.Shorten(ws.Sandbox.Rel(abs), 200) // a refused over-long path is not echoed whole
	switch {
	case os.IsNotExist(err):
		return fmt.Sprintf("%s does not exist", rel)
	case os.IsPermission(err):
		return fmt.Sprintf("%s: permission denied", rel)
	case confined.IsOutside(err):
		return fmt.Sprintf("%s resolves outside the workspace through a symlink", rel)
	case errors.Is(err, confined.ErrNotRegular), errors.Is(err, confined.ErrTooLarge):
		return fmt.Sprintf("%s: %v", rel, errors.Unwrap(err))
	}
	if pe, ok := err.(*fs.PathError); ok {
		op := pe.Op
		if plain, ok := rootOps[op]; ok {
			op = plain
		}
		return fmt.Sprintf("%s: %s %v", rel, op, pe.Err)
	}
	return fmt.Sprintf("%s: %v", rel, err)
}
