package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "plan.json")
	s, notice, err := OpenStore(path)
	require.NoError(t, err)
	require.Empty(t, notice)
	clock := t0
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return s, path
}

func readDisk(t *testing.T, path string) Plan {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var p Plan
	require.NoError(t, json.Unmarshal(data, &p))
	return p
}

func TestStoreEmptyAtStart(t *testing.T) {
	s, path := openTemp(t)
	assert.Nil(t, s.Current())
	assert.Equal(t, 0, s.Version())
	assert.Equal(t, path, s.Path())
	assert.NoFileExists(t, path, "opening writes nothing")
}

func TestStoreUpdatePersistsAndReloads(t *testing.T) {
	s, path := openTemp(t)
	p1, err := s.Update(args(item("inspect", InProgress), with(item("implement", Pending), func(it *Item) { it.Dependencies = []string{"inspect"} })))
	require.NoError(t, err)
	assert.Equal(t, 1, p1.Version)
	assert.Equal(t, "2025-01-01T00:00:01.000Z", p1.UpdatedAt)
	p2, err := s.Update(args(item("inspect", Done), item("implement", InProgress)))
	require.NoError(t, err)
	assert.Equal(t, 2, p2.Version)
	assert.Equal(t, &p2, s.Current())
	assert.Equal(t, p2, readDisk(t, path))

	re, notice, err := OpenStore(path)
	require.NoError(t, err)
	assert.Empty(t, notice)
	assert.Equal(t, &p2, re.Current(), "a reopened store has the saved plan")
	assert.Equal(t, 2, re.Version())
}

func TestStoreCurrentIsACopy(t *testing.T) {
	s, _ := openTemp(t)
	_, err := s.Update(args(with(item("a", Done), func(it *Item) { it.Evidence = []string{"e"} })))
	require.NoError(t, err)
	c := s.Current()
	c.Items[0].Evidence[0] = "mutated"
	c.Items[0].Title = "mutated"
	c.Reason = "mutated"
	assert.Equal(t, "e", s.Current().Items[0].Evidence[0])
	assert.Equal(t, "Title of a", s.Current().Items[0].Title)
	assert.Equal(t, "test plan", s.Current().Reason)
}

func TestStoreInvalidUpdateChangesNothing(t *testing.T) {
	s, path := openTemp(t)
	good, err := s.Update(args(item("a", InProgress), item("b", Pending)))
	require.NoError(t, err)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)

	bad := []UpdateArgs{
		args(item("a", InProgress), item("b", InProgress)),
		args(item("a b", Pending)),
		args(with(item("a", Pending), func(it *Item) { it.Dependencies = []string{"zzz"} })),
		args(item("a", "finished")),
		{Reason: "", Items: []Item{item("a", Done)}},
	}
	for i, in := range bad {
		_, err := s.Update(in)
		var ve *ValidationError
		require.True(t, errors.As(err, &ve), "case %d: %v", i, err)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "disk unchanged")
	info2, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, info.ModTime(), info2.ModTime())
	assert.Equal(t, &good, s.Current(), "memory unchanged")
	assert.Equal(t, 1, s.Version())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temp files left, only plan.json and its lock")
}

func TestStoreWriteFailureChangesNothing(t *testing.T) {
	s, path := openTemp(t)
	good, err := s.Update(args(item("a", Pending)))
	require.NoError(t, err)
	orig := writeFile
	t.Cleanup(func() { writeFile = orig })
	writeFile = func(string, []byte) error { return errors.New("disk full") }

	_, err = s.Update(args(item("a", Done)))
	assert.ErrorContains(t, err, "disk full")
	_, err = s.Clear()
	assert.ErrorContains(t, err, "disk full")
	next, err := Normalize(args(item("b", Done)), &good, t0)
	require.NoError(t, err)
	assert.ErrorContains(t, s.Replace(next), "disk full")
	assert.Equal(t, &good, s.Current())
	assert.Equal(t, 1, s.Version())
	assert.Equal(t, good, readDisk(t, path))
}

func TestStoreRealWriteFailure(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	s, path := openTemp(t)
	good, err := s.Update(args(item("a", Pending)))
	require.NoError(t, err)
	dir := filepath.Dir(path)
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	_, err = s.Update(args(item("a", Done)))
	require.Error(t, err)
	assert.Equal(t, &good, s.Current())
	assert.Equal(t, good, readDisk(t, path))
}

func TestStoreClearKeepsCountingVersions(t *testing.T) {
	s, path := openTemp(t)
	for i := 0; i < 3; i++ {
		_, err := s.Update(args(item("a", Pending)))
		require.NoError(t, err)
	}
	cleared, err := s.Clear()
	require.NoError(t, err)
	assert.Equal(t, Plan{Version: 4, UpdatedAt: "2025-01-01T00:00:04.000Z", Reason: ClearedReason, Items: []Item{}}, cleared)
	assert.Nil(t, s.Current())
	assert.Equal(t, 4, s.Version())
	assert.JSONEq(t, `{"version":4,"updatedAt":"2025-01-01T00:00:04.000Z","reason":"plan cleared by the user","items":[]}`, mustRead(t, path))

	re, notice, err := OpenStore(path)
	require.NoError(t, err)
	assert.Empty(t, notice)
	assert.Nil(t, re.Current(), "a cleared plan stays cleared after a restart")
	assert.Equal(t, 4, re.Version())
	p, err := re.Update(args(item("b", Pending)))
	require.NoError(t, err)
	assert.Equal(t, 5, p.Version, "a plan after a clear never reuses a version")
}

func TestStoreEmptyUpdateCountsAsNoPlan(t *testing.T) {
	s, _ := openTemp(t)
	_, err := s.Update(args(item("a", Pending)))
	require.NoError(t, err)
	p, err := s.Update(args())
	require.NoError(t, err)
	assert.Equal(t, 2, p.Version)
	assert.Equal(t, []Item{}, p.Items)
	assert.Nil(t, s.Current())
}

func TestStoreReplace(t *testing.T) {
	s, path := openTemp(t)
	p, err := Normalize(args(item("a", Pending)), &Plan{Version: 4}, t0)
	require.NoError(t, err)
	require.NoError(t, s.Replace(p))
	assert.Equal(t, &p, s.Current())
	assert.Equal(t, p, readDisk(t, path))

	assert.ErrorContains(t, s.Replace(p), "version 5 is not newer than the saved version 5")
	bad := p.Clone()
	bad.Version = 9
	bad.Items[0].NextAction = ""
	assert.ErrorContains(t, s.Replace(bad), "next_action is required")
	assert.Equal(t, &p, s.Current())
	assert.Equal(t, p, readDisk(t, path))
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestOpenStoreCorruptFile(t *testing.T) {
	valid := `{"version":3,"updatedAt":"2025-01-01T00:00:00.000Z","reason":"r","items":[{"id":"a","title":"t","status":"pending","next_action":"n"}]}`
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"not JSON", `{"version": 3, "items": [`, "not a plan JSON document"},
		{"empty file", ``, "not a plan JSON document"},
		{"wrong types", `{"version":"three","items":[]}`, "not a plan JSON document"},
		{"null", `null`, "version 0 must be at least 1"},
		{"trailing data", valid + `{}`, "trailing data"},
		{"rule broken", strings.Replace(valid, `"next_action":"n"`, `"dependencies":["a"]`, 1), "depends on itself"},
		{"not normalized", strings.Replace(valid, `"title":"t"`, `"title":" t "`, 1), "not normalized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "plan.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			s, notice, err := OpenStore(path)
			require.NoError(t, err)
			assert.Nil(t, s.Current())
			assert.Equal(t, 0, s.Version())
			assert.Contains(t, notice, tc.want)
			assert.NoFileExists(t, path)
			aside, err := filepath.Glob(path + ".corrupt-*")
			require.NoError(t, err)
			require.Len(t, aside, 1)
			assert.Regexp(t, `plan\.json\.corrupt-\d{8}T\d{6}\.\d{3}Z$`, aside[0])
			assert.Contains(t, notice, aside[0], "the notice says where the file went")
			kept, err := os.ReadFile(aside[0])
			require.NoError(t, err)
			assert.Equal(t, tc.content, string(kept), "the corrupt content is kept byte for byte")

			p, err := s.Update(args(item("a", Pending)))
			require.NoError(t, err)
			assert.Equal(t, 1, p.Version)
		})
	}
}

func TestOpenStoreKeepsEarlierCorruptCopies(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	clock = func() time.Time { return t0 }
	t.Cleanup(func() { clock = time.Now })
	for i := 0; i < 3; i++ {
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("garbage %d", i)), 0o600))
		_, notice, err := OpenStore(path)
		require.NoError(t, err)
		require.NotEmpty(t, notice)
	}
	for i, suffix := range []string{"", "-2", "-3"} {
		kept, err := os.ReadFile(path + ".corrupt-20250101T000000.000Z" + suffix)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("garbage %d", i), string(kept))
	}
}

func TestOpenStoreUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	// A directory in place of the file: unreadable for everyone, root included.
	require.NoError(t, os.Mkdir(path, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o600))
	s, notice, err := OpenStore(path)
	require.NoError(t, err)
	assert.Nil(t, s.Current())
	assert.Contains(t, notice, "is a directory")
	aside, err := filepath.Glob(path + ".corrupt-*")
	require.NoError(t, err)
	require.Len(t, aside, 1)
	assert.FileExists(t, filepath.Join(aside[0], "inside"), "nothing is discarded")
	_, err = s.Update(args(item("a", Pending)))
	require.NoError(t, err)
	assert.Equal(t, 1, readDisk(t, path).Version)
}

func TestOpenStoreDirectoryError(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, _, err := OpenStore(filepath.Join(blocker, "plan.json"))
	assert.ErrorContains(t, err, "cannot create state directory")
}

func TestOpenStoreRemovesLeftoverTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	stale := filepath.Join(dir, ".plan.json.123.tmp")
	fresh := filepath.Join(dir, ".plan.json.456.tmp")
	other := filepath.Join(dir, "undo.json")
	for _, f := range []string{stale, fresh, other} {
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o600))
	}
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	_, _, err := OpenStore(path)
	require.NoError(t, err)
	// Writers hold the state lock while their temp file exists: any temp
	// file seen under the lock, however recent, is a crash's leftover.
	assert.NoFileExists(t, stale)
	assert.NoFileExists(t, fresh)
	assert.FileExists(t, other)
}

// Two stores on one file are two Neovims on one workspace.
func TestTwoStoresOnOneFileNeverLoseAnUpdate(t *testing.T) {
	a, path := openTemp(t)
	b, notice, err := OpenStore(path)
	require.NoError(t, err)
	require.Empty(t, notice)

	pa, err := a.Update(args(item("from-a", InProgress)))
	require.NoError(t, err)
	assert.Equal(t, 1, pa.Version)

	// b last saw no plan: its update is based on a stale version.
	_, err = b.Update(args(item("from-b", InProgress)))
	var stale *StaleError
	require.ErrorAs(t, err, &stale)
	assert.Equal(t, 0, stale.Base)
	assert.Equal(t, pa, stale.Current, "the refusal carries the current plan")
	assert.Equal(t, pa, readDisk(t, path), "a's plan is kept")
	assert.Equal(t, &pa, b.Current(), "b now holds the saved plan")

	// b's retry, based on what it was shown, succeeds with the next version.
	pb, err := b.Update(args(item("from-a", Done), item("from-b", InProgress)))
	require.NoError(t, err)
	assert.Equal(t, 2, pb.Version)
	assert.Equal(t, pb, readDisk(t, path))

	// Now a is stale; a clear (the user's word) applies anyway, after v2.
	_, err = a.Update(args(item("again", Pending)))
	require.ErrorAs(t, err, &stale)
	assert.Equal(t, 1, stale.Base)
	assert.Equal(t, 2, stale.Current.Version)
	cleared, err := b.Clear()
	require.NoError(t, err)
	assert.Equal(t, 3, cleared.Version)
	_, err = a.Update(args(item("fresh", Pending)))
	require.ErrorAs(t, err, &stale, "a saw v2, the file holds the v3 clear")
	p, err := a.Update(args(item("fresh", Pending)))
	require.NoError(t, err)
	assert.Equal(t, 4, p.Version, "versions never repeat across the two")
}

func TestStoresInManyGoroutinesNeverShareAVersion(t *testing.T) {
	_, path := openTemp(t)
	const stores, each = 4, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	saved := map[int]string{}
	for w := 0; w < stores; w++ {
		st, _, err := OpenStore(path)
		require.NoError(t, err)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; {
				p, err := st.Update(args(item(fmt.Sprintf("w%d-%d", w, i), Pending)))
				var stale *StaleError
				if errors.As(err, &stale) {
					continue // retry on the plan it was shown
				}
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				_, dup := saved[p.Version]
				saved[p.Version] = p.Items[0].ID
				mu.Unlock()
				assert.False(t, dup, "version %d saved twice", p.Version)
				i++
			}
		}(w)
	}
	wg.Wait()
	assert.Len(t, saved, stores*each, "every update was saved under its own version")
	assert.Equal(t, stores*each, readDisk(t, path).Version)
}

func TestStoreConcurrentUse(t *testing.T) {
	s, path := openTemp(t)
	var wg sync.WaitGroup
	const workers, each = 4, 10
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := s.Update(args(item(fmt.Sprintf("w%d", w), Pending), item(fmt.Sprintf("n%d", i), Done)))
				assert.NoError(t, err)
				_ = s.Current()
				_ = s.Version()
			}
		}(w)
	}
	wg.Wait()
	assert.Equal(t, workers*each, s.Version(), "every update got its own version")
	assert.Equal(t, s.Current(), func() *Plan { p := readDisk(t, path); return &p }())
}
