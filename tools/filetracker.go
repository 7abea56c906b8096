package tools

import (
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
