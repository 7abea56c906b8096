package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// ClearedReason is the reason of the state a user clear leaves behind.
const ClearedReason = "plan cleared by the user"

// clock is the time source of new stores (tests replace it).
var clock = time.Now

// Store holds the workspace plan in memory and in one JSON file (plan.json in
// the per-workspace state dir, chosen by the caller). Every change is written
// to disk first (temp file, fsync, rename, fsync of the directory) and only
// then becomes the in-memory state, so a failed write changes nothing and a
// crash leaves either the old or the new complete file.
//
// The version counter never goes back: Clear writes an empty plan with the
// next version instead of deleting the file, so a plan made after a clear (or
// after a restart following a clear) never reuses a version number the model
// has already seen. A plan with no items counts as "no plan" for Current.
//
// Several processes may share the file (two Neovims on one workspace): every
// read-modify-write happens under the state file's lock (workspace.LockState),
// and the file is read again under it. An update whose base (the version this
// store last saw, which is the version its conversation last saw) is no
// longer the saved version is refused with a *StaleError carrying the
// current plan, so no update is ever lost and the model can retry from the
// real state.
//
// A Store is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	path string
	last Plan // newest state, possibly with no items; Version 0 when nothing was ever saved
	now  func() time.Time
}

// maxPlanFile bounds the saved plan Fido reads back (a valid plan is far
// smaller; a FIFO, a symlink leading out of the state directory or a huge
// file is refused unread and kept aside like any unloadable plan).
const maxPlanFile = 4 << 20

// OpenStore loads the plan at path (creating its directory when needed). A
// missing file means no plan. A file that cannot be read or is not a valid
// plan is renamed aside to "<path>.corrupt-<UTC time>" and the store starts
// empty; notice then tells the user what happened (show it with vim.notify).
// err is returned only when the state directory cannot be created.
func OpenStore(path string) (*Store, string, error) {
	s := &Store{path: path, now: clock, last: Plan{Items: []Item{}}}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("plan: cannot create state directory: %w", err)
	}
	lock, err := workspace.LockState(path, 0)
	if err != nil {
		return s, fmt.Sprintf("Fido: the saved plan could not be loaded: %v; starting without a plan.", err), nil
	}
	defer lock.Unlock()
	// Writers hold the lock while their temp file exists, so every temp file
	// seen here was left by a crash.
	removeTemps(path)
	p, ok, notice := s.load()
	if ok {
		s.last = p
	}
	return s, notice, nil
}

// load reads the saved plan. ok is false when there is none: missing, or
// unreadable or invalid, in which case it is moved aside to
// "<path>.corrupt-<UTC time>" (never discarded silently) and notice says so.
// Called with the state lock held.
func (s *Store) load() (p Plan, ok bool, notice string) {
	path := s.path
	data, err := confined.ReadPath(path, maxPlanFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Plan{}, false, ""
	}
	if err == nil {
		if err = decodePlan(data, &p); err == nil {
			return p, true, ""
		}
	}
	aside := path + ".corrupt-" + s.now().UTC().Format("20060102T150405.000Z")
	for n := 2; fileExists(aside); n++ {
		aside = fmt.Sprintf("%s.corrupt-%s-%d", path, s.now().UTC().Format("20060102T150405.000Z"), n)
	}
	if rerr := os.Rename(path, aside); rerr != nil {
		return Plan{}, false, fmt.Sprintf("Fido: the saved plan %s could not be loaded (%v) and could not be moved aside (%v); starting without a plan, and the next plan update will replace that file.", path, err, rerr)
	}
	return Plan{}, false, fmt.Sprintf("Fido: the saved plan could not be loaded (%v); it was kept as %s and Fido starts without a plan.", err, aside)
}

// StaleError refuses an update based on a plan version that is no longer the
// saved one (another Fido on the same workspace changed the plan since).
type StaleError struct {
	Base    int  // the version the refused update was based on
	Current Plan // the saved plan now (possibly cleared or empty)
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("the plan was changed by another Fido session since version %d; it is now version %d", e.Base, e.Current.Version)
}

// sync takes the state lock and reloads the saved plan into memory. It
// returns the version memory held before, whether the saved plan differed
// from it, and the unlock function. Called with s.mu held.
func (s *Store) sync() (base int, changed bool, unlock func(), err error) {
	lock, err := workspace.LockState(s.path, 0)
	if err != nil {
		return 0, false, nil, fmt.Errorf("plan: %w", err)
	}
	base = s.last.Version
	// A missing or broken file is no newer state: memory stays the truth
	// and the next save writes it again.
	if p, ok, _ := s.load(); ok && (p.Version != s.last.Version || p.UpdatedAt != s.last.UpdatedAt) {
		s.last, changed = p, true
	}
	return base, changed, lock.Unlock, nil
}

func decodePlan(data []byte, p *Plan) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(p); err != nil {
		return fmt.Errorf("not a plan JSON document: %w", err)
	}
	if dec.More() {
		return errors.New("not a plan JSON document: trailing data")
	}
	return p.Validate()
}

// Path is the file the store writes.
func (s *Store) Path() string { return s.path }

// Current returns a deep copy of the plan, or nil when there is none (never
// saved, cleared, or replaced by a plan with no items).
func (s *Store) Current() *Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last.Items) == 0 {
		return nil
	}
	c := s.last.Clone()
	return &c
}

// Version is the newest version the store holds, counting clears; 0 when no
// plan was ever saved.
func (s *Store) Version() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.Version
}

// Update normalizes args against the current state (see Normalize) and saves
// the result. On a *ValidationError or a write error nothing changes. When
// another process saved a different version since this store last saw the
// plan, nothing is saved and the error is a *StaleError with that plan,
// which from then on is this store's state (so a retry based on it works).
func (s *Store) Update(args UpdateArgs) (Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	base, changed, unlock, err := s.sync()
	if err != nil {
		return Plan{}, err
	}
	defer unlock()
	if changed {
		return Plan{}, &StaleError{Base: base, Current: s.last.Clone()}
	}
	p, err := Normalize(args, &s.last, s.now())
	if err != nil {
		return Plan{}, err
	}
	if err := s.save(p); err != nil {
		return Plan{}, err
	}
	return p.Clone(), nil
}

// Replace saves an already normalized plan. It must be valid (Plan.Validate)
// and its version must be newer than the store's.
func (s *Store) Replace(p Plan) error {
	if err := p.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, unlock, err := s.sync()
	if err != nil {
		return err
	}
	defer unlock()
	if p.Version <= s.last.Version {
		return fmt.Errorf("plan: version %d is not newer than the saved version %d", p.Version, s.last.Version)
	}
	return s.save(p.Clone())
}

// Clear replaces the plan with an empty one (reason ClearedReason) with the
// next version, on disk and in memory, and returns that cleared state: give
// it to the model with ClearedCall so its source of truth is not stale. A
// clear is the user's word, so it applies whatever version is saved.
func (s *Store) Clear() (Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, unlock, err := s.sync()
	if err != nil {
		return Plan{}, err
	}
	defer unlock()
	p := ClearedPlan(s.last.Version+1, s.now())
	if err := s.save(p); err != nil {
		return Plan{}, err
	}
	return p.Clone(), nil
}

// ClearedPlan is the empty plan a clear leaves behind.
func ClearedPlan(version int, now time.Time) Plan {
	return Plan{Version: version, UpdatedAt: FormatTime(now), Reason: ClearedReason, Items: []Item{}}
}

// save writes p and then makes it the in-memory state. Called with s.mu held.
func (s *Store) save(p Plan) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("plan: encode: %w", err)
	}
	if err := writeFile(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("plan: save %s: %w", s.path, err)
	}
	s.last = p
	return nil
}

// writeFile writes atomically (workspace.WriteFileAtomic); tests replace it to
// simulate a failing disk.
var writeFile = func(path string, data []byte) error { return workspace.WriteFileAtomic(path, data, 0o644) }

// removeTemps deletes the temp files a crashed writer left behind (with the
// old or new contents of the file). Called with the state lock held.
func removeTemps(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "."+base+".") || !strings.HasSuffix(name, ".tmp") {
			continue
		}
		_ = os.Remove(filepath.Join(dir, name))
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
