package workspace

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools/confined"
)

// Undo log bounds: one entry keeps at most MaxUndoContent bytes of prior
// content; the whole log keeps at most maxUndoEntries entries and
// maxUndoTotal bytes on disk, counted as written (JSON escapes and base64
// included). Over the bounds, the oldest entries lose their content first
// (the entry says so), then the oldest entries go.
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
	// Wrote is what the change wrote, as line edits of Prior (of nothing
	// for a create), so a review tells Fido's lines from the user's; nil
	// when not kept (entries of older Fidos, content dropped by the bounds,
	// an rm).
	Wrote *[]LineEdit `json:"wrote,omitempty"`
	// Conv and Turn name the conversation and its turn (user message) that
	// made the change, for :FidoReview and /rewind ("" / 0: unknown).
	Conv string `json:"conv,omitempty"`
	Turn int    `json:"turn,omitempty"`
	// ID names the entry in the log (set by Record and Begin).
	ID string `json:"id,omitempty"`
	// Pending marks an entry written before its change (Begin) and never
	// confirmed: Fido stopped (crash, kill -9) between the two, so the change
	// may or may not have happened. A revert checks which.
	Pending bool `json:"pending,omitempty"`
}

// UndoLog is the newest-first mutation log of a workspace. Each entry is
// one small JSON file in a directory beside the log's path (undo.json →
// undo/), named so that names sort by time: recording an entry writes only
// that entry, so a patch's log work does not grow with the log, and two
// Fido processes on one workspace add entries without losing each other's.
// Every change to the directory is made under the state lock of the log's
// path (LockState), which also orders the pruning to the bounds.
//
// Entries are cached in memory by file name and re-read only when a file
// changes. An UndoLog is safe for concurrent use.
type UndoLog struct {
	mu         sync.Mutex
	path       string
	dir        string
	maxEntries int
	maxTotal   int
	cache      map[string]cachedEntry
	sizes      map[string]int64 // entry file sizes known without a stat
	lastNanos  int64            // keeps this process's entry names increasing
}

type cachedEntry struct {
	size  int64
	mtime time.Time
	entry UndoEntry
}

const (
	undoExt     = ".json"    // a confirmed entry
	pendingExt  = ".pending" // an entry written before its change, not yet confirmed
	leanExt     = ".lean"    // an entry whose prior content was dropped (Pending is in its JSON)
	corruptPart = ".corrupt-"
)

// OpenUndoLog opens the log at path (its entries live in the directory
// path without its extension). A log in the older one-file format at path is
// moved into the directory. A corrupt file is moved aside to
// path+".corrupt-<time>" and the log starts empty; the returned error then
// says so in words for the user, and the returned log is usable. Temp files
// a crashed writer left behind are removed.
func OpenUndoLog(path string) (*UndoLog, error) {
	dir := strings.TrimSuffix(path, filepath.Ext(path))
	if dir == path {
		dir = path + ".d"
	}
	u := &UndoLog{path: path, dir: dir, maxEntries: maxUndoEntries, maxTotal: maxUndoTotal, cache: map[string]cachedEntry{}, sizes: map[string]int64{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return u, fmt.Errorf("undo log %s could not be created (%v); changes will not be undoable", dir, err)
	}
	lock, err := LockState(path, 0)
	if err != nil {
		return u, fmt.Errorf("undo log: %v", err)
	}
	defer lock.Unlock()
	removeTempFiles(dir, ".")
	removeTempFiles(filepath.Dir(path), "."+filepath.Base(path)+".")
	return u, u.migrate()
}

// migrate moves the entries of a one-file log at u.path into the directory.
func (u *UndoLog) migrate() error {
	data, err := confined.ReadPath(u.path, maxUndoFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("undo log %s could not be read (%v); starting with an empty log", u.path, err)
	}
	var old []UndoEntry
	if err := json.Unmarshal(data, &old); err != nil {
		aside := u.path + corruptPart + time.Now().UTC().Format("20060102T150405")
		if rerr := os.Rename(u.path, aside); rerr != nil {
			return fmt.Errorf("undo log %s is corrupt (%v) and could not be moved aside (%v); starting with an empty log", u.path, err, rerr)
		}
		return fmt.Errorf("undo log %s was corrupt (%v); moved it to %s and started an empty log", u.path, err, aside)
	}
	// Oldest first, so the names keep the order.
	for i := len(old) - 1; i >= 0; i-- {
		if _, err := u.write(old[i], false); err != nil {
			return fmt.Errorf("undo log %s could not be converted (%v); its remaining entries stay in it", u.path, err)
		}
	}
	if err := os.Remove(u.path); err != nil {
		return fmt.Errorf("undo log %s was converted but could not be removed: %v", u.path, err)
	}
	u.prune()
	return nil
}

// Path is the path the log was opened with (the state lock's name).
func (u *UndoLog) Path() string { return u.path }

// Dir is the directory holding the entries.
func (u *UndoLog) Dir() string { return u.dir }

// Entries returns a copy of the entries, newest first, those of other Fido
// processes on the workspace included.
func (u *UndoLog) Entries() []UndoEntry {
	u.mu.Lock()
	defer u.mu.Unlock()
	names, _ := u.names()
	out := make([]UndoEntry, 0, len(names))
	for i := len(names) - 1; i >= 0; i-- {
		if e, ok := u.load(names[i]); ok {
			out = append(out, e)
		}
	}
	return out
}

// Record adds e as the newest entry (its Time is set when zero) and applies
// the bounds.
func (u *UndoLog) Record(e UndoEntry) error {
	_, err := u.add(&e, false)
	return err
}

// Begin records e as a pending entry before the change it describes, so a
// crash between the change and Confirm still leaves an entry (Pending set).
// It sets e.ID (and e.Time when zero); pass e to Confirm or Abort afterwards.
func (u *UndoLog) Begin(e *UndoEntry) error {
	_, err := u.add(e, true)
	return err
}

// Confirm marks the pending entry e as done: the change happened.
func (u *UndoLog) Confirm(e UndoEntry) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return WithStateLock(u.path, func() error {
		base := filepath.Join(u.dir, e.ID)
		if err := os.Rename(base+pendingExt, base+undoExt); err != nil {
			if errors.Is(err, fs.ErrNotExist) && fileExists(base+leanExt) {
				return nil // pruned meanwhile; its content was dropped
			}
			return fmt.Errorf("undo log: confirm %s: %w", e.Path, err)
		}
		if size, ok := u.sizes[e.ID+pendingExt]; ok {
			u.sizes[e.ID+undoExt] = size
			delete(u.sizes, e.ID+pendingExt)
		}
		return nil
	})
}

// Abort removes the pending entry e: the change did not happen.
func (u *UndoLog) Abort(e UndoEntry) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return WithStateLock(u.path, func() error {
		for _, ext := range []string{pendingExt, leanExt} {
			err := os.Remove(filepath.Join(u.dir, e.ID+ext))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("undo log: %w", err)
			}
		}
		return nil
	})
}

// Remove deletes the entry want (matched by ID, or for entries without one
// by time, tool, op and path, since the log may have grown meanwhile).
func (u *UndoLog) Remove(want UndoEntry) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return WithStateLock(u.path, func() error {
		names, _ := u.names()
		for _, name := range names {
			e, ok := u.load(name)
			if !ok {
				continue
			}
			same := want.ID != "" && e.ID == want.ID ||
				want.ID == "" && e.Time.Equal(want.Time) && e.Path == want.Path && e.Op == want.Op && e.Tool == want.Tool
			if same {
				delete(u.cache, name)
				return os.Remove(filepath.Join(u.dir, name))
			}
		}
		return fmt.Errorf("the entry is no longer in the undo log")
	})
}

func (u *UndoLog) add(e *UndoEntry, pending bool) (string, error) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var name string
	err := WithStateLock(u.path, func() error {
		var err error
		if name, err = u.write(*e, pending); err != nil {
			return err
		}
		u.prune()
		return nil
	})
	if err != nil {
		return "", err
	}
	e.ID, _, _ = splitEntryName(name)
	e.Pending = pending
	return name, nil
}

// write stores e as a new file (pending or not) and returns its name.
// Called with u.mu and the state lock held.
func (u *UndoLog) write(e UndoEntry, pending bool) (string, error) {
	nanos := max(e.Time.UnixNano(), u.lastNanos+1)
	u.lastNanos = nanos
	id := newEntryID(nanos)
	e.ID, e.Pending = "", false // both live in the file name
	data, err := encodeEntry(e)
	if err != nil {
		return "", fmt.Errorf("undo log: encode: %w", err)
	}
	name := id + undoExt
	if pending {
		name = id + pendingExt
	}
	if err := writeEntryFile(filepath.Join(u.dir, name), data, true); err != nil {
		return "", fmt.Errorf("undo log: %w", err)
	}
	u.sizes[name] = int64(len(data))
	return name, nil
}

// syncEntry flushes an entry file to the disk (tests replace it to measure
// the log's own work apart from the disk's).
var syncEntry = (*os.File).Sync

// writeEntryFile writes an entry file the way WriteFileAtomic does (temp
// file, fsync, rename) but without syncing the directory: that costs a
// second journal commit (~3 ms on a plain disk) on every patch, and the
// rename is committed by the fsync of the patched file that follows it
// anyway. A crash of Fido alone (kill -9) loses nothing either way.
func writeEntryFile(path string, data []byte, flush bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && flush {
		err = syncEntry(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// newEntryID is unique and sorts by time: <UTC nanoseconds, 20 digits>-<random>.
func newEntryID(nanos int64) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%020d-%s", nanos, hex.EncodeToString(b))
}

// encodeEntry is the compact JSON of e. Text that JSON escaping would blow
// up (control characters are six bytes each) is stored as base64 instead, so
// an entry never takes more than 4/3 of its content plus a little on disk.
func encodeEntry(e UndoEntry) ([]byte, error) {
	if e.Prior != nil && e.Encoding == "" && jsonTextSize(*e.Prior) > base64.StdEncoding.EncodedLen(len(*e.Prior)) {
		s := base64.StdEncoding.EncodeToString([]byte(*e.Prior))
		e.Prior, e.Encoding = &s, "base64"
	}
	return marshalCompact(e)
}

// jsonTextSize is the size of s as a JSON string without HTML escaping
// (encoding/json writes U+2028 and U+2029 escaped too).
func jsonTextSize(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			n += 3
		}
	}
	return n
}

func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// splitEntryName parses an entry file name into its ID and kind.
func splitEntryName(name string) (id, ext string, ok bool) {
	if strings.HasPrefix(name, ".") {
		return "", "", false
	}
	for _, ext := range []string{undoExt, pendingExt, leanExt} {
		if id, found := strings.CutSuffix(name, ext); found && id != "" && !strings.Contains(id, ".") {
			return id, ext, true
		}
	}
	return "", "", false
}

// names lists the entry files, oldest first, one per entry: when a crash
// left both the full and the lean file of an entry, the lean one counts and
// the other is returned in superseded. Called with u.mu held.
func (u *UndoLog) names() (names, superseded []string) {
	ents, err := os.ReadDir(u.dir)
	if err != nil {
		return nil, nil
	}
	byID := map[string]string{}
	for _, d := range ents {
		n := d.Name()
		id, ext, ok := splitEntryName(n)
		if !ok || !d.Type().IsRegular() {
			continue
		}
		if prev, dup := byID[id]; dup {
			if ext == leanExt {
				prev, n = n, prev
			}
			superseded = append(superseded, n)
			byID[id] = prev
			continue
		}
		byID[id] = n
	}
	names = make([]string, 0, len(byID))
	for _, n := range byID {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, superseded
}

// load returns the entry in file name, from the cache while the file is
// unchanged. An unreadable or corrupt entry file is skipped (and left for
// the user to inspect). Called with u.mu held.
func (u *UndoLog) load(name string) (UndoEntry, bool) {
	p := filepath.Join(u.dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		delete(u.cache, name)
		return UndoEntry{}, false
	}
	if c, ok := u.cache[name]; ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return cloneEntry(c.entry), true
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return UndoEntry{}, false
	}
	var e UndoEntry
	if json.Unmarshal(data, &e) != nil {
		return UndoEntry{}, false
	}
	id, ext, _ := splitEntryName(name)
	e.ID = id
	if ext != leanExt {
		e.Pending = ext == pendingExt
	}
	u.cache[name] = cachedEntry{size: fi.Size(), mtime: fi.ModTime(), entry: e}
	return cloneEntry(e), true
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func cloneEntry(e UndoEntry) UndoEntry {
	if e.Prior != nil {
		s := *e.Prior
		e.Prior = &s
	}
	if e.Wrote != nil {
		w := slices.Clone(*e.Wrote)
		e.Wrote = &w
	}
	return e
}

// prune applies the bounds: beyond maxEntries the oldest entries go; beyond
// maxTotal bytes on disk the oldest entries lose their prior content first,
// then the oldest entries go, until the log is back to 7/8 of maxTotal. The
// newest entry is kept whole. It reads only
// file sizes, except for the entries it rewrites. Called with u.mu and the
// state lock held.
func (u *UndoLog) prune() {
	type file struct {
		name string
		size int64
	}
	var files []file
	var total int64
	names, superseded := u.names()
	for _, n := range superseded {
		u.drop(n)
	}
	known := make(map[string]int64, len(names))
	for _, n := range names {
		size, ok := u.sizes[n]
		if !ok {
			fi, err := os.Lstat(filepath.Join(u.dir, n))
			if err != nil {
				continue
			}
			size = fi.Size()
		}
		known[n] = size
		files = append(files, file{n, size})
		total += size
	}
	u.sizes = known // forget removed files
	for len(files) > u.maxEntries {
		total -= files[0].size
		u.drop(files[0].name)
		files = files[1:]
	}
	if total <= int64(u.maxTotal) {
		return
	}
	// Over the bound: make room for a while (down to 7/8 of it), so a
	// full log strips a batch of old entries once every many patches
	// instead of one on every patch.
	limit := int64(u.maxTotal) / 8 * 7
	for i := 0; i < len(files)-1 && total > limit; i++ {
		if strings.HasSuffix(files[i].name, leanExt) {
			continue
		}
		if size, ok := u.stripPrior(files[i].name); ok {
			total += size - files[i].size
		}
	}
	for len(files) > 1 && total > limit {
		total -= files[0].size
		u.drop(files[0].name)
		files = files[1:]
	}
}

func (u *UndoLog) drop(name string) {
	delete(u.cache, name)
	delete(u.sizes, name)
	_ = os.Remove(filepath.Join(u.dir, name))
}

// stripPrior replaces entry name by its lean form (no prior content) and
// returns the new size. The lean form is a new file beside the full one,
// which is then removed: replacing a file by rename would make the
// filesystem flush the new data at once (ext4's auto_da_alloc), a disk wait
// on every patch of a full log. A crash between the two leaves both, and
// names prefers the lean one. ok is false when nothing was written.
func (u *UndoLog) stripPrior(name string) (int64, bool) {
	e, ok := u.load(name)
	if !ok {
		return 0, false
	}
	if e.Prior != nil || e.Wrote != nil {
		e.Prior, e.Encoding, e.Wrote = nil, "", nil
		e.PriorOmitted = fmt.Sprintf("dropped: the undo log keeps at most %d bytes", u.maxTotal)
	}
	id := e.ID
	e.ID = "" // it lives in the file name; Pending stays in the JSON
	data, err := encodeEntry(e)
	if err != nil {
		return 0, false
	}
	lean := id + leanExt
	// Not flushed: at worst a power cut takes the oldest entry with it.
	if err := writeEntryFile(filepath.Join(u.dir, lean), data, false); err != nil {
		return 0, false
	}
	u.sizes[lean] = int64(len(data))
	u.drop(name)
	return int64(len(data)), true
}

// removeTempFiles deletes the temp files of WriteFileAtomic (.<name>.*.tmp)
// whose name starts with prefix, left in dir by a crashed writer with the old
// or new contents of a state file. Called with the state lock held, so no
// live writer owns one.
func removeTempFiles(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, d := range ents {
		n := d.Name()
		if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".tmp") && d.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}

// PriorContent fills e's Prior fields from a file's previous bytes.
func PriorContent(e *UndoEntry, data []byte) {
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

// LineEdit is one edit of a change's Wrote: Del lines of the prior content
// from line At (zero-based, in the prior content) replaced by Text (whole
// lines with their ends; base64 when Encoding says so).
type LineEdit struct {
	At       int    `json:"at"`
	Del      int    `json:"del"`
	Text     string `json:"text,omitempty"`
	Encoding string `json:"encoding,omitempty"`
}

// SetWrote records in e what its change wrote over prior (nil: the file
// did not exist), as the line edits between the two: small for a small
// change, whatever the file's size. When the edits would exceed
// MaxUndoContent, or prior was not kept, Wrote stays nil and a review falls
// back on e.After.
func SetWrote(e *UndoEntry, prior, after []byte) {
	e.Wrote = nil
	if e.Existed && e.Prior == nil {
		return // the prior content was not kept: the edits could not be applied
	}
	edits := []LineEdit{}
	a, b := SplitLines(prior), SplitLines(after)
	size := 0
	for _, h := range DiffLines(a, b) {
		text := strings.Join(b[h.B0:h.B1], "")
		size += len(text)
		if size > MaxUndoContent {
			return
		}
		ed := LineEdit{At: h.A0, Del: h.A1 - h.A0, Text: text}
		if !utf8.ValidString(text) {
			ed.Text, ed.Encoding = base64.StdEncoding.EncodeToString([]byte(text)), "base64"
		}
		edits = append(edits, ed)
	}
	e.Wrote = &edits
}

// SetWroteAll records in e that its change replaced prior whole by after:
// no diff, for a file the model rewrote (its text is in the call anyway).
func SetWroteAll(e *UndoEntry, prior, after []byte) {
	e.Wrote = nil
	if e.Existed && e.Prior == nil || len(after) > MaxUndoContent {
		return
	}
	ed := LineEdit{At: 0, Del: len(SplitLines(prior)), Text: string(after)}
	if !utf8.Valid(after) {
		ed.Text, ed.Encoding = base64.StdEncoding.EncodeToString(after), "base64"
	}
	e.Wrote = &[]LineEdit{ed}
}

// WroteBytes is the content e's change wrote, rebuilt from prior (the
// content before it) and e.Wrote; ok is false when e does not keep it or
// the edits do not fit prior.
func WroteBytes(e UndoEntry, prior []byte) ([]byte, bool) {
	if e.Wrote == nil {
		return nil, false
	}
	lines := SplitLines(prior)
	var b strings.Builder
	at := 0
	for _, ed := range *e.Wrote {
		if ed.At < at || ed.Del < 0 || ed.At+ed.Del > len(lines) {
			return nil, false
		}
		text := ed.Text
		if ed.Encoding == "base64" {
			raw, err := base64.StdEncoding.DecodeString(ed.Text)
			if err != nil {
				return nil, false
			}
			text = string(raw)
		}
		b.WriteString(strings.Join(lines[at:ed.At], ""))
		b.WriteString(text)
		at = ed.At + ed.Del
	}
	b.WriteString(strings.Join(lines[at:], ""))
	out := []byte(b.String())
	if e.After != "" && ContentHash(out) != e.After {
		return nil, false
	}
	return out, true
}
