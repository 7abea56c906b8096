package conversation

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Conversations are stored one file per conversation as JSON Lines: an
// append-only log where every complete message is one record, written and
// fsynced before the conversation goes on. Appending a line is the cheapest
// crash-safe write there is (no rewrite of what is already on disk, no
// database to embed), a torn last line is all a kill -9 can leave behind, and
// the file stays readable with any text tool. Records:
//
//	{"t":"head","id":…,"created":…,"root":…}   first line
//	{"t":"msg","at":…,"m":{…message…}}          one complete message
//	{"t":"start","at":…,"call":"id"}            a tool call began running
//	{"t":"meta","at":…,"title":…,"model":…,"cost":…}   metadata changed
//	{"t":"live","at":…,"reason":…,"ms":[…]}     the live history was replaced
//	                                            (compaction, rewind); what came
//	                                            before stays in the file
//
// Meta describes one saved conversation.
type Meta struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Model   string    `json:"model"`
	// Messages counts the live conversation's messages (system excluded).
	Messages int     `json:"messages"`
	Cost     float64 `json:"cost"`
	// Mode is the approval mode the conversation was left in (/mode).
	Mode string `json:"mode,omitempty"`
	Root string `json:"root,omitempty"`
}

// Loaded is a conversation read back from its log.
type Loaded struct {
	Meta Meta
	// Messages is the live conversation without a system message: what the
	// next request carries after the current system prompt.
	Messages []Message
	// Full is every message ever appended, pre-compaction history included,
	// for browsing.
	Full []Message
	// Warnings say what loading had to skip or repair, in words.
	Warnings []string
	// Results are the transcript lines of tool results, by call id, so a
	// resumed transcript renders as it did live.
	Results map[string]ResultNote
	// Seen is what the conversation last saw of each file (the
	// read-before-write guard's knowledge), as last saved.
	Seen map[string]string
}

// maxRecord bounds one record when reading; a longer line is corrupt.
const maxRecord = 64 << 20

// Store keeps a workspace's conversations in one directory.
type Store struct {
	dir string
	// Scrub, when set, is applied to every record before it is written, so
	// secrets never reach the disk.
	Scrub func(string) string
}

// NewStore uses dir (created on first write).
func NewStore(dir string) *Store {
	return &Store{dir: dir}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(id string) string {
	return filepath.Join(s.dir, id+".jsonl")
}

// validID keeps ids to what NewID mints, so an id never names a
// path outside the store.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r == '-' || r == 'T' || r == 'Z') {
			return false
		}
	}
	return true
}

// NewID mints a conversation id: the time t, then random hex digits.
func NewID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Create starts a new conversation log under id ("" mints one), owned
// (locked) by this process. Its head record is written at once and made
// durable by the fsync of the first record after it, which follows it
// straight away (a conversation is created for its first message).
func (s *Store) Create(id, root, model string) (*Log, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	at := now()
	if id == "" {
		id = NewID(at)
	}
	if !validID(id) {
		return nil, fmt.Errorf("conversation store: invalid id %q", id)
	}
	f, err := os.OpenFile(s.path(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	l := &Log{store: s, f: f, meta: Meta{ID: id, Created: at, Updated: at, Model: model, Root: root}}
	l.mu.Lock()
	l.unsynced = true
	err = l.writeLocked(record{T: "head", ID: id, At: at, Root: root, Model: model})
	l.mu.Unlock()
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Open resumes a conversation for writing. It fails with
// ErrBusy when another host has it open.
func (s *Store) Open(id string) (*Log, *Loaded, error) {
	if !validID(id) {
		return nil, nil, fmt.Errorf("no conversation %q", id)
	}
	f, err := os.OpenFile(s.path(id), os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("conversation %s: %w", id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	conv, torn, err := readConversation(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("conversation %s: %w", id, err)
	}
	if torn > 0 {
		// Cut a torn last record so the next append starts on a fresh line.
		if st, err := f.Stat(); err == nil {
			_ = f.Truncate(st.Size() - torn)
		}
	}
	l := &Log{store: s, f: f, meta: conv.Meta, live: len(conv.Messages)}
	return l, conv, nil
}

// Load reads a conversation without taking it over (for browsing).
func (s *Store) Load(id string) (*Loaded, error) {
	if !validID(id) {
		return nil, fmt.Errorf("no conversation %q", id)
	}
	f, err := os.Open(s.path(id))
	if err != nil {
		return nil, fmt.Errorf("conversation %s: %w", id, err)
	}
	defer f.Close()
	conv, _, err := readConversation(f)
	if err != nil {
		return nil, fmt.Errorf("conversation %s: %w", id, err)
	}
	return conv, nil
}

// List returns every conversation's metadata, newest update first, and the
// names of files it could not read.
func (s *Store) List() ([]Meta, []string, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var out []Meta
	var bad []string
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || !validID(id) {
			continue
		}
		conv, err := s.Load(id)
		if err != nil {
			bad = append(bad, e.Name())
			continue
		}
		out = append(out, conv.Meta)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID > out[j].ID
	})
	return out, bad, nil
}

// Newest is the most recently updated conversation's id, "" when none.
func (s *Store) Newest() (string, error) {
	metas, _, err := s.List()
	if err != nil || len(metas) == 0 {
		return "", err
	}
	return metas[0].ID, nil
}

// Delete removes a conversation that no host has open.
func (s *Store) Delete(id string) error {
	if !validID(id) {
		return fmt.Errorf("no conversation %q", id)
	}
	f, err := os.OpenFile(s.path(id), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("conversation %s: %w", id, err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return err
	}
	return os.Remove(s.path(id))
}

// Log is an open conversation this process appends to. It is
// safe for concurrent use.
type Log struct {
	store *Store
	mu    sync.Mutex
	f     *os.File
	meta  Meta
	live  int
	err   error
	// batching: records wait in batch for the end of Batch.
	batching bool
	batch    []byte
	enc      []byte // the record being written
	// unsynced: the next record is written without an fsync (the head,
	// which the first record's fsync covers).
	unsynced bool
}

// maxKeptBuffer bounds the buffers (a record's encoding, a batch) a log
// keeps for the next use.
const maxKeptBuffer = 1 << 20

// ID is the conversation's id.
func (l *Log) ID() string { return l.meta.ID }

// Meta is the conversation's current metadata.
func (l *Log) Meta() Meta {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.meta
	m.Messages = l.live
	return m
}

// Append stores one complete message (a system message is never stored: a
// resumed conversation runs under the then-current system prompt). The
// first user message becomes the title until Rename.
func (l *Log) Append(m Message) error { return l.AppendResult(m, nil) }

// AppendResult is Append for a tool result with its transcript line.
func (l *Log) AppendResult(m Message, note *ResultNote) error {
	if m.Role == RoleSystem {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	at := now()
	mm := m.Clone()
	if err := l.writeLocked(record{T: "msg", At: at, M: &mm, Note: note}); err != nil {
		return err
	}
	l.live++
	l.meta.Updated = at
	if l.meta.Title == "" && m.Role == RoleUser {
		l.meta.Title = titleOf(m.Content)
		return l.writeLocked(record{T: "meta", At: at, Title: l.meta.Title})
	}
	return nil
}

// ToolStarted records that a tool call began running, so an interrupted
// call can later be reported truthfully.
func (l *Log) ToolStarted(callID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writeLocked(record{T: "start", At: now(), Call: callID})
}

// SetMeta records a new title, model or cost total (empty/zero values are
// left as they are).
func (l *Log) SetMeta(title, model string, cost float64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := record{T: "meta", At: now()}
	if title != "" {
		l.meta.Title, r.Title = title, title
	}
	if model != "" {
		l.meta.Model, r.Model = model, model
	}
	if cost > 0 {
		l.meta.Cost, r.Cost = cost, cost
	}
	l.meta.Updated = r.At
	return l.writeLocked(r)
}

// SetMode records the conversation's approval mode.
func (l *Log) SetMode(mode string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.meta.Mode = mode
	return l.writeLocked(record{T: "mode", At: now(), Mode: mode})
}

// SetSeen records what the conversation saw of each file, so a resumed
// conversation keeps its read-before-write knowledge.
func (l *Log) SetSeen(seen map[string]string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seen == nil {
		seen = map[string]string{}
	}
	return l.writeLocked(record{T: "seen", At: now(), Seen: seen})
}

// ReplaceLive records that the live conversation is now msgs (system
// message excluded), e.g. after compaction or a rewind. Everything appended
// before stays in the file.
func (l *Log) ReplaceLive(msgs []Message, reason string) error {
	var kept []Message
	for _, m := range msgs {
		if m.Role != RoleSystem {
			kept = append(kept, m.Clone())
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writeLocked(record{T: "live", At: now(), Reason: reason, Ms: kept}); err != nil {
		return err
	}
	l.live = len(kept)
	l.meta.Updated = now()
	return nil
}

// Close releases the conversation for other hosts.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Batch runs f and writes the records it made with one write and one
// fsync when it returns (at once, when a batch is already open). The
// first error, f's or the write's, is returned.
func (l *Log) Batch(f func() error) error {
	l.mu.Lock()
	if l.batching {
		l.mu.Unlock()
		return f()
	}
	l.batching = true
	l.mu.Unlock()
	ferr := f()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.batch
	err := l.appendLocked(b)
	l.batching, l.batch = false, b[:0] // written: the buffer serves the next batch
	if cap(b) > maxKeptBuffer {
		l.batch = nil
	}
	if ferr != nil {
		return ferr
	}
	return err
}

// writeLocked appends one record and fsyncs it, or keeps it for the end of
// the open batch. After a failed write the log refuses further writes, so
// a gap never goes unnoticed.
func (l *Log) writeLocked(r record) error {
	if l.err != nil {
		return l.err
	}
	if l.f == nil {
		return errors.New("conversation log is closed")
	}
	// Encoded into a buffer the log keeps (a long answer's record is not
	// copied from buffer to buffer), messages by appendMessageRecord.
	b, ok := appendMessageRecord(l.enc[:0], &r)
	if ok {
		b = append(b, '\n')
	} else {
		buf := bytes.NewBuffer(l.enc[:0])
		if err := json.NewEncoder(buf).Encode(r); err != nil { // ends with the newline
			return fmt.Errorf("conversation %s: %w", l.meta.ID, err)
		}
		b = buf.Bytes()
	}
	if l.enc = b; cap(b) > maxKeptBuffer {
		l.enc = nil
	}
	if l.store.Scrub != nil {
		s := string(b)
		if out := l.store.Scrub(s); out != s {
			b = []byte(out)
		}
	}
	if l.batching {
		l.batch = append(l.batch, b...)
		return nil
	}
	return l.appendLocked(b)
}

// appendLocked writes whole records and fsyncs them.
func (l *Log) appendLocked(b []byte) error {
	if l.err != nil {
		return l.err
	}
	if len(b) == 0 {
		return nil
	}
	if l.f == nil {
		return errors.New("conversation log is closed")
	}
	if _, err := l.f.Write(b); err != nil {
		l.err = fmt.Errorf("conversation %s could not be saved: %w", l.meta.ID, err)
		return l.err
	}
	if l.unsynced {
		l.unsynced = false
		return nil
	}
	if err := l.f.Sync(); err != nil {
		l.err = fmt.Errorf("conversation %s could not be saved: %w", l.meta.ID, err)
		return l.err
	}
	return nil
}

// readConversation replays a log. torn is the size in bytes of an
// incomplete last record (ignored).
func readConversation(r io.Reader) (*Loaded, int64, error) {
	conv := &Loaded{}
	started := map[string]bool{}
	br := bufio.NewReaderSize(r, 1<<16)
	var torn int64
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long record: gather it whole (bounded).
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= maxRecord {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, 0, fmt.Errorf("record %d is longer than %d MiB", n, maxRecord>>20)
			}
			return nil, 0, err
		}
		if len(line) == 0 {
			break
		}
		complete := line[len(line)-1] == '\n'
		var rec record
		if jerr := json.Unmarshal(bytes.TrimSpace(line), &rec); jerr != nil || !complete {
			if !complete || errors.Is(err, io.EOF) {
				torn = int64(len(line))
				conv.Warnings = append(conv.Warnings, "ignored an incomplete last record (the host stopped while writing it)")
				break
			}
			conv.Warnings = append(conv.Warnings, fmt.Sprintf("skipped unreadable record %d", n))
			continue
		}
		conv.apply(rec, started)
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if conv.Meta.ID == "" {
		return nil, 0, errors.New("not a conversation log (no head record)")
	}
	conv.repair(started)
	conv.Meta.Messages = len(conv.Messages)
	return conv, torn, nil
}

func (c *Loaded) apply(r record, started map[string]bool) {
	if !r.At.IsZero() && r.At.After(c.Meta.Updated) {
		c.Meta.Updated = r.At
	}
	switch r.T {
	case "head":
		c.Meta.ID, c.Meta.Created, c.Meta.Root, c.Meta.Model = r.ID, r.At, r.Root, r.Model
	case "msg":
		if r.M != nil {
			c.Messages = append(c.Messages, *r.M)
			c.Full = append(c.Full, r.M.Clone())
			if r.Note != nil && r.M.ToolCallID != "" {
				if c.Results == nil {
					c.Results = map[string]ResultNote{}
				}
				c.Results[r.M.ToolCallID] = *r.Note
			}
		}
	case "start":
		started[r.Call] = true
	case "meta":
		if r.Title != "" {
			c.Meta.Title = r.Title
		}
		if r.Model != "" {
			c.Meta.Model = r.Model
		}
		if r.Cost > 0 {
			c.Meta.Cost = r.Cost
		}
	case "seen":
		c.Seen = r.Seen
	case "mode":
		c.Meta.Mode = r.Mode
	case "live":
		c.Messages = CloneMessages(r.Ms)
	}
}

// repair answers every tool call that has no result (the host died while
// it ran), saying truthfully whether the tool had started, and drops a
// trailing result whose call is missing, so the next request is valid.
func (c *Loaded) repair(started map[string]bool) {
	answered := map[string]bool{}
	for _, m := range c.Messages {
		if m.Role == RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	out := make([]Message, 0, len(c.Messages))
	for _, m := range c.Messages {
		out = append(out, m)
		for _, call := range m.ToolCalls {
			if m.Role != RoleAssistant || answered[call.ID] {
				continue
			}
			text := "interrupted: Fido stopped before this tool started; it did not run"
			if started[call.ID] {
				text = "interrupted: Fido stopped while this tool was running; it may have partly run, check its effects before retrying"
			}
			b, _ := json.Marshal(map[string]string{"error": text})
			out = append(out, Message{Role: RoleTool, ToolCallID: call.ID, Name: call.Name, Content: string(b)})
			answered[call.ID] = true
			c.Warnings = append(c.Warnings, fmt.Sprintf("answered the interrupted %s call", call.Name))
		}
	}
	c.Messages = orderToolResults(out)
}

// orderToolResults moves every tool result right behind its assistant
// message, in the order of the calls, so a repaired history is well formed.
func orderToolResults(ms []Message) []Message {
	results := map[string]Message{}
	for _, m := range ms {
		if m.Role == RoleTool {
			if _, dup := results[m.ToolCallID]; !dup {
				results[m.ToolCallID] = m
			}
		}
	}
	var out []Message
	for _, m := range ms {
		switch m.Role {
		case RoleTool:
			continue
		case RoleAssistant:
			out = append(out, m)
			for _, call := range m.ToolCalls {
				if r, ok := results[call.ID]; ok {
					out = append(out, r)
					delete(results, call.ID)
				}
			}
		default:
			out = append(out, m)
		}
	}
	return out
}

// titleOf is a conversation title from a user message: its first line,
// bounded.
func titleOf(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	if line == "" {
		line = "(untitled)"
	}
	return line
}
