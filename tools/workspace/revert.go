package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// ContentHash is the hex SHA-256 recorded as UndoEntry.After.
func ContentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// RevertLast undoes the newest entry of the undo log when that is safe, and
// removes it from the log. It refuses, changing nothing, when the file was
// changed again since (its content no longer matches what Fido wrote), when
// its buffer has unsaved changes, or when the prior content was not kept.
// It returns a one-line description of what it restored.
func (ws *Workspace) RevertLast(ctx context.Context) (string, error) {
	if ws.Undo == nil {
		return "", errors.New("there is no undo log")
	}
	entries := ws.Undo.Entries()
	if len(entries) == 0 {
		return "", errors.New("the undo log is empty")
	}
	e := entries[0]
	abs, err := ws.Sandbox.Resolve(e.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", e.Path, err)
	}
	if err := ws.Sandbox.ProtectedError(e.Path, abs); err != nil {
		return "", err
	}
	if e.Pending && ws.NeverApplied(e, abs) {
		// Fido stopped between recording the change and making it.
		if err := ws.Undo.Remove(e); err != nil {
			return "", fmt.Errorf("the undo log could not be updated: %v", err)
		}
		return fmt.Sprintf("nothing to revert: Fido stopped before its %s of %s was made; dropped that entry", e.Op, e.Path), nil
	}
	desc, err := ws.revert(ctx, e, abs)
	if err != nil {
		return "", fmt.Errorf("cannot revert %s %s %s: %v; nothing was changed", e.Tool, e.Op, e.Path, err)
	}
	ws.Reload(ctx, []string{abs})
	if err := ws.Undo.Remove(e); err != nil {
		return desc, fmt.Errorf("%s, but the undo log could not be updated: %v", desc, err)
	}
	return desc, nil
}

func (ws *Workspace) revert(ctx context.Context, e UndoEntry, abs string) (string, error) {
	switch e.Op {
	case "create":
		if err := ws.unchangedSince(ctx, e, abs); err != nil {
			return "", err
		}
		if err := ws.Sandbox.Remove(abs); err != nil {
			return "", errors.New(ErrorText(ws, abs, err))
		}
		return fmt.Sprintf("removed %s, which patch had created", e.Path), nil
	case "overwrite", "edit":
		prior, err := PriorBytes(e)
		if err != nil {
			return "", err
		}
		if err := ws.unchangedSince(ctx, e, abs); err != nil {
			return "", err
		}
		if err := ws.Sandbox.WriteFileAtomic(abs, prior, modeOr(e.PriorMode)); err != nil {
			return "", errors.New(ErrorText(ws, abs, err))
		}
		return fmt.Sprintf("restored %s as it was before the %s", e.Path, e.Op), nil
	case "rm":
		prior, err := PriorBytes(e)
		if err != nil {
			return "", err
		}
		if _, err := ws.Sandbox.Lstat(abs); err == nil {
			return "", errors.New("a file exists at that path again")
		}
		if err := ws.ModifiedError(ctx, abs); err != nil {
			return "", err
		}
		top, err := ws.Sandbox.MkdirAll(filepath.Dir(abs), 0o755)
		if err != nil {
			return "", errors.New(ErrorText(ws, filepath.Dir(abs), err))
		}
		if err := ws.Sandbox.WriteFileAtomic(abs, prior, modeOr(e.PriorMode)); err != nil {
			ws.RemoveEmptyDirs(filepath.Dir(abs), top)
			return "", errors.New(ErrorText(ws, abs, err))
		}
		return fmt.Sprintf("restored %s, which rm had deleted", e.Path), nil
	case "mkdir":
		dirs, err := ws.onlyEmptyDirs(abs)
		if err != nil {
			return "", err
		}
		// Deepest first, each with rmdir: a file that appears meanwhile stops
		// the removal instead of being deleted with the tree.
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := ws.Sandbox.Remove(dirs[i]); err != nil {
				return "", errors.New(ErrorText(ws, dirs[i], err))
			}
		}
		return fmt.Sprintf("removed the empty directory %s/", e.Path), nil
	case "rmdir":
		return "", errors.New("the files rmdir deleted were not kept")
	}
	return "", fmt.Errorf("unknown operation %q", e.Op)
}

// unchangedSince checks that the file still holds what Fido wrote and has no
// unsaved buffer.
func (ws *Workspace) unchangedSince(ctx context.Context, e UndoEntry, abs string) error {
	if e.After == "" {
		return errors.New("this entry predates revert support (no record of what was written)")
	}
	data, err := ws.Sandbox.ReadFile(abs, maxRevertRead)
	if err != nil {
		return errors.New(ErrorText(ws, abs, err))
	}
	if ContentHash(data) != e.After {
		return errors.New("the file was changed after Fido wrote it")
	}
	return ws.ModifiedError(ctx, abs)
}

// NeverApplied tells, for an entry left pending by a crash, whether its
// change demonstrably never happened. When it cannot tell, it says false and
// revert's usual checks decide (they refuse unless the file holds exactly
// what Fido wrote).
func (ws *Workspace) NeverApplied(e UndoEntry, abs string) bool {
	switch e.Op {
	case "create", "mkdir":
		_, err := ws.Sandbox.Lstat(abs)
		return errors.Is(err, fs.ErrNotExist)
	case "overwrite", "edit", "rm":
		prior, err := PriorBytes(e)
		if err != nil {
			return false
		}
		data, err := ws.Sandbox.ReadFile(abs, int64(len(prior))+1)
		return err == nil && bytes.Equal(data, prior) && ContentHash(data) != e.After
	}
	return false
}

// PriorBytes decodes the content e kept of the file before its change.
func PriorBytes(e UndoEntry) ([]byte, error) {
	if e.Prior == nil {
		if e.PriorOmitted != "" {
			return nil, fmt.Errorf("the prior content was not kept (%s)", e.PriorOmitted)
		}
		return nil, errors.New("the prior content was not kept")
	}
	if e.Encoding == "base64" {
		return base64.StdEncoding.DecodeString(*e.Prior)
	}
	return []byte(*e.Prior), nil
}

func modeOr(m fs.FileMode) fs.FileMode {
	if m == 0 {
		return 0o644
	}
	return m
}

// maxRevertRead bounds how much of a file revert reads to compare it with
// what Fido wrote.
const maxRevertRead = 256 << 20

// onlyEmptyDirs returns the directories of the tree dir, parents first, or
// an error unless the tree holds directories only.
func (ws *Workspace) onlyEmptyDirs(dir string) ([]string, error) {
	var dirs []string
	err := ws.Sandbox.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return fmt.Errorf("the directory is not empty any more (%s)", filepath.Base(p))
		}
		dirs = append(dirs, p)
		return nil
	})
	return dirs, err
}
