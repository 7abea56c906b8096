package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
)

// FileTracker is one conversation's knowledge of the workspace's files: the
// content hash (hex SHA-256) of every file as of the last time the model read
// it (read_file, partial reads included) or Fido wrote it (patch). The
// mutating tools compare it with the disk before they change a file, so an
// edit the user (or a command, or another program) made since is never
// overwritten unseen. It belongs to the conversation (agent.Session), reaches
// the tools through Invocation.Files and is saved with the conversation's
// snapshots. Paths are workspace-relative with forward slashes. Safe for
// concurrent use; a nil *FileTracker tracks nothing and guards nothing.
type FileTracker struct {
	mu   sync.Mutex
	seen map[string]string
}

// NewFileTracker starts from seen (may be nil), e.g. a restored snapshot's.
func NewFileTracker(seen map[string]string) *FileTracker {
	ft := &FileTracker{}
	ft.Replace(seen)
	return ft
}

// Seen returns the hash of rel as the conversation last saw it.
func (ft *FileTracker) Seen(rel string) (string, bool) {
	if ft == nil {
		return "", false
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	h, ok := ft.seen[rel]
	return h, ok
}

// Saw records that the conversation now knows rel with this content hash.
func (ft *FileTracker) Saw(rel, hash string) {
	if ft == nil {
		return
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.seen[rel] = hash
}

// Forget drops rel and everything under it (a deleted file or directory).
func (ft *FileTracker) Forget(rel string) {
	if ft == nil {
		return
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	delete(ft.seen, rel)
	prefix := strings.TrimSuffix(rel, "/") + "/"
	for p := range ft.seen {
		if strings.HasPrefix(p, prefix) {
			delete(ft.seen, p)
		}
	}
}

// Snapshot returns a copy of what the conversation saw, for saving it.
func (ft *FileTracker) Snapshot() map[string]string {
	if ft == nil {
		return nil
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	out := make(map[string]string, len(ft.seen))
	for k, v := range ft.seen {
		out[k] = v
	}
	return out
}

// Replace sets what the conversation saw (a recalled snapshot's state).
func (ft *FileTracker) Replace(seen map[string]string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.seen = make(map[string]string, len(seen))
	for k, v := range seen {
		ft.seen[k] = v
	}
}

// HashFile returns the content hash of the regular file at abs, read
// through the workspace's os.Root; exists is false when there is no regular
// file there (a directory or device is for the tool itself to refuse).
func (ws *Workspace) HashFile(abs string) (hash string, exists bool, err error) {
	f, fi, err := ws.Sandbox.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return "", false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", true, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// errStale is the refusal for a file that changed since the model saw it.
func errStale(rel string) error {
	return fmt.Errorf("%s changed on disk since you last read it (the user, a command or another program edited it); "+
		"this was not applied, to keep that edit. Read %s again with read_file and redo the change on its current content", rel, rel)
}

// errUnread is the refusal for overwriting a file the model never read.
func errUnread(rel string) error {
	return fmt.Errorf("%s exists and you have not read it in this conversation; read it before overwriting it "+
		"(read_file), or change it with search/replace; this was not applied", rel)
}

// CheckSeen is the read-before-write guard for one file about to be changed:
// an existing file must still hold what the conversation last saw of it; an
// existing file the conversation never saw may only be changed when
// unreadOK (search/replace: the search text is the evidence). A missing file
// passes (nothing to lose). Without a tracker it passes.
func (ws *Workspace) CheckSeen(ctx context.Context, ft *FileTracker, abs string, unreadOK bool) error {
	if ft == nil {
		return nil
	}
	rel := ws.Sandbox.Rel(abs)
	hash, exists, err := ws.HashFile(abs)
	if err != nil {
		return errors.New(ErrorText(ws, abs, err))
	}
	if !exists {
		return nil
	}
	seen, ok := ft.Seen(rel)
	switch {
	case !ok && unreadOK:
		return nil
	case !ok:
		return errUnread(rel)
	case seen != hash:
		return errStale(rel)
	}
	return ctx.Err()
}
