package tools

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools/confined"
)

// Undo log bounds: one entry keeps at most MaxUndoContent bytes of prior
// content; the whole log keeps at most maxUndoEntries entries and
// maxUndoTotal bytes of content (older content is dropped first, and the
// entry says so).
const (
	MaxUndoContent = 1 << 20
	maxUndoEntries = 200
	maxUndoTotal   = 8 << 20
	// maxUndoFile bounds undo.json when it is read back (its content is
	// bounded by maxUndoTotal; JSON escaping can grow it).
	maxUndoFile = 64 << 20
)

// UndoEntry records one mutation. For patch and rm it keeps the content the
// file had before (when it existed and was small enough), which is the ground
// for a real revert.
type UndoEntry struct {
	Time time.Time `json:"time"`
	Tool string    `json:"tool"`
	// Op is what happened: "create", "overwrite", "edit", "rm", "rmdir" or "mkdir".
	Op   string `json:"op"`
	Path string `json:"path"` // workspace-relative
	// Existed says whether Path existed before (patch).
	Existed bool `json:"existed"`
	// Prior is the previous content; Encoding is "" for UTF-8 text or "base64".
	Prior    *string `json:"prior,omitempty"`
	Encoding string  `json:"encoding,omitempty"`
	// PriorSize is the previous size in bytes when the file existed.
	PriorSize int64 `json:"prior_size,omitempty"`
	// PriorOmitted says why Prior is missing although the file existed.
	PriorOmitted string `json:"prior_omitted,omitempty"`
	// PriorMode is the file's permission bits before the change.
	PriorMode fs.FileMode `json:"prior_mode,omitempty"`
	// After is the SHA-256 (hex) of what the change wrote (patch), so a
	// revert can tell whether the file was changed again since.
	After string `json:"after_sha256,omitempty"`
	// Conv and Turn name the conversation and its turn (user message) that
	// made the change, for :FidoReview and /rewind ("" / 0: unknown).
	Conv string `json:"conv,omitempty"`
	Turn int    `json:"turn,omitempty"`
}

// UndoLog is the newest-first mutation log kept in undo.json in the
// workspace's state directory. It is safe for concurrent use.
type UndoLog struct {
	mu         sync.Mutex
	path       string
	entries    []UndoEntry
	maxEntries int
	maxTotal   int
}

// OpenUndoLog loads the log at path (a missing file is an empty log). A
// corrupt file is moved aside to path+".corrupt-<time>" and the log starts
// empty; the returned error then says so in words for the user, and the
// returned log is usable.
func OpenUndoLog(path string) (*UndoLog, error) {
	u := &UndoLog{path: path, maxEntries: maxUndoEntries, maxTotal: maxUndoTotal}
	data, err := confined.ReadPath(path, maxUndoFile)
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return u, fmt.Errorf("undo log %s could not be read (%v); starting with an empty log", path, err)
	}
	if err := json.Unmarshal(data, &u.entries); err != nil {
		u.entries = nil
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405")
		if rerr := os.Rename(path, aside); rerr != nil {
			return u, fmt.Errorf("undo log %s is corrupt (%v) and could not be moved aside (%v); starting with an empty log", path, err, rerr)
		}
		return u, fmt.Errorf("undo log %s was corrupt (%v); moved it to %s and started an empty log", path, err, aside)
	}
	return u, nil
}

// Path is where the log is stored.
func (u *UndoLog) Path() string { return u.path }

// Entries returns a copy of the entries, newest first.
func (u *UndoLog) Entries() []UndoEntry {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]UndoEntry(nil), u.entries...)
}

// Record prepends e and saves the log atomically. Content beyond the bounds
// is dropped from the oldest entries first.
func (u *UndoLog) Record(e UndoEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.entries = append([]UndoEntry{e}, u.entries...)
	if len(u.entries) > u.maxEntries {
		u.entries = u.entries[:u.maxEntries]
	}
	total := 0
	for i := range u.entries {
		if p := u.entries[i].Prior; p != nil {
			total += len(*p)
			if total > u.maxTotal {
				u.entries[i].Prior, u.entries[i].Encoding = nil, ""
				u.entries[i].PriorOmitted = fmt.Sprintf("dropped: the undo log keeps at most %d bytes of content", u.maxTotal)
			}
		}
	}
	data, err := json.MarshalIndent(u.entries, "", " ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(u.path, data, 0o600)
}

// Remove deletes the entry want (matched by time, tool, op and path, since the
// log may have grown meanwhile) and saves the log.
func (u *UndoLog) Remove(want UndoEntry) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, e := range u.entries {
		if e.Time.Equal(want.Time) && e.Path == want.Path && e.Op == want.Op && e.Tool == want.Tool {
			u.entries = append(u.entries[:i:i], u.entries[i+1:]...)
			data, err := json.MarshalIndent(u.entries, "", " ")
			if err != nil {
				return err
			}
			return WriteFileAtomic(u.path, data, 0o600)
		}
	}
	return fmt.Errorf("the entry is no longer in the undo log")
}

// priorContent fills e's Prior fields from a file's previous bytes.
func priorContent(e *UndoEntry, data []byte) {
	e.Existed = true
	e.PriorSize = int64(len(data))
	if len(data) > MaxUndoContent {
		e.PriorOmitted = fmt.Sprintf("too large: %d bytes (the undo log keeps at most %d bytes per file)", len(data), MaxUndoContent)
		return
	}
	s := string(data)
	if !utf8.ValidString(s) {
		s, e.Encoding = base64.StdEncoding.EncodeToString(data), "base64"
	}
	e.Prior = &s
}
