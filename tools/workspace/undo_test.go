package workspace

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func priorEntry(path string, content string) UndoEntry {
	e := UndoEntry{Tool: "patch", Op: "edit", Path: path}
	PriorContent(&e, []byte(content))
	e.After = ContentHash([]byte(content + "!"))
	return e
}

// Two logs on one path are two Neovims on one workspace.
func TestUndoLogTwoWritersKeepEveryEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "undo.json")
	a, err := OpenUndoLog(path)
	require.NoError(t, err)
	b, err := OpenUndoLog(path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w, u := range []*UndoLog{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				assert.NoError(t, u.Record(priorEntry(fmt.Sprintf("w%d-%d.go", w, i), "before")))
			}
		}()
	}
	wg.Wait()
	for _, u := range []*UndoLog{a, b} {
		var paths []string
		for _, e := range u.Entries() {
			paths = append(paths, e.Path)
		}
		assert.Len(t, paths, 30, "both logs see all 30 entries")
	}
	c, err := OpenUndoLog(path)
	require.NoError(t, err)
	assert.Len(t, c.Entries(), 30, "and so does a log opened later")
	// Each writer's entries stay newest first in its own order.
	var w0 []string
	for _, e := range c.Entries() {
		if strings.HasPrefix(e.Path, "w0-") {
			w0 = append(w0, e.Path)
		}
	}
	assert.Equal(t, "w0-14.go", w0[0])
	assert.Equal(t, "w0-0.go", w0[len(w0)-1])
}

// Text that JSON escapes six-fold (control characters) is still bounded by
// the bytes on disk.
func TestUndoLogDiskSizeIsTrulyBounded(t *testing.T) {
	u, err := OpenUndoLog(filepath.Join(t.TempDir(), "undo.json"))
	require.NoError(t, err)
	// 1/8 of the real sizes (8 MiB bound, 1 MiB entries): the same logic,
	// fast enough under -race.
	u.maxTotal = maxUndoTotal / 8
	worst := strings.Repeat("\x01<>&", MaxUndoContent/8/4)
	for i := 0; i < 8; i++ { // 8 entries of 1/8 of the bound: escaped as text they would be 6 times over it
		require.NoError(t, u.Record(priorEntry(fmt.Sprintf("f%d", i), worst)))
		size := undoDiskSize(t, u)
		assert.LessOrEqual(t, size, int64(u.maxTotal), "%d bytes on disk after %d entries", size, i+1)
	}
	es := u.Entries()
	require.Len(t, es, 8, "entries lose their content before they go")
	got, err := PriorBytes(es[0])
	require.NoError(t, err)
	assert.Equal(t, worst, string(got), "the newest entry keeps its content exactly")
}

// A patch's log work does not grow with the log: only its own entry is
// written. (The one-file log rewrote everything: ~220 ms a patch when full.)
func TestUndoLogRecordCostDoesNotGrowWithTheLog(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: fills the undo log to measure its cost")
	}
	full, err := OpenUndoLog(filepath.Join(t.TempDir(), "undo.json"))
	require.NoError(t, err)
	empty, err := OpenUndoLog(filepath.Join(t.TempDir(), "undo.json"))
	require.NoError(t, err)
	big := strings.Repeat("a line of Go source code in a file of moderate size\n", 800) // ~40 KiB
	for i := 0; i < maxUndoEntries; i++ {
		require.NoError(t, full.Record(priorEntry(fmt.Sprintf("f%d.go", i), big)))
	}
	require.Greater(t, undoDiskSize(t, full), int64(maxUndoTotal)*3/4, "the log is full")
	small := strings.Repeat("x := 1\n", 600) // ~4 KiB, a typical source file
	// The one fsync of each entry is the disk's cost, not the log's: leave
	// it out of the comparison (counting that it happens).
	syncs := 0
	orig := syncEntry
	syncEntry = func(*os.File) error { syncs++; return nil }
	t.Cleanup(func() { syncEntry = orig })
	var costFull, costEmpty []time.Duration
	for i := 0; i < 21; i++ { // interleaved, so machine load hits both alike
		for _, c := range []struct {
			u     *UndoLog
			costs *[]time.Duration
		}{{full, &costFull}, {empty, &costEmpty}} {
			e := priorEntry("main.go", small)
			start := time.Now()
			require.NoError(t, c.u.Begin(&e))
			require.NoError(t, c.u.Confirm(e))
			*c.costs = append(*c.costs, time.Since(start))
		}
	}
	median := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	mf, me := median(costFull), median(costEmpty)
	t.Logf("log work per patch: %s with a full log, %s with an empty one", mf, me)
	assert.Equal(t, 42, syncs, "every entry is flushed before its change")
	// Generous factors: the machine running the tests may be busy. The
	// one-file log took ~220 ms here with a full log.
	assert.Less(t, mf, 10*me+10*time.Millisecond, "the cost does not grow with the log")
	assert.Less(t, mf, 40*time.Millisecond)
	assert.LessOrEqual(t, undoDiskSize(t, full), int64(maxUndoTotal))
}

func TestUndoLogRemovesLeftoverTempFilesAtOpen(t *testing.T) {
	state := t.TempDir()
	path := filepath.Join(state, "undo.json")
	u, err := OpenUndoLog(path)
	require.NoError(t, err)
	require.NoError(t, u.Record(priorEntry("a.go", "secret old contents")))
	leftovers := []string{
		filepath.Join(u.Dir(), ".00000000000000000001-aaaa.json.123.tmp"),
		filepath.Join(state, ".undo.json.456.tmp"),
	}
	plans := filepath.Join(state, ".plan.json.789.tmp") // the plan store's business
	for _, f := range append(leftovers, plans) {
		require.NoError(t, os.WriteFile(f, []byte("old contents"), 0o600))
	}
	_, err = OpenUndoLog(path)
	require.NoError(t, err)
	for _, f := range leftovers {
		assert.NoFileExists(t, f)
	}
	assert.FileExists(t, plans)
	assert.Len(t, u.Entries(), 1)
}

func TestJSONTextSize(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t", "\x01\x1f<>&", "line\u2028sep\u2029", "ünïcödé", strings.Repeat("\x00", 100)} {
		b, err := marshalCompact(s)
		require.NoError(t, err)
		assert.Equal(t, len(b)-1, jsonTextSize(s), "%q", s) // marshalCompact adds a newline
	}
}

func TestUndoLogMigratesTheOneFileLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "undo.json")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old := []UndoEntry{priorEntry("new.go", "newer"), priorEntry("old.go", "older")}
	old[0].Time, old[1].Time = t0.Add(time.Second), t0
	data, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	u, err := OpenUndoLog(path)
	require.NoError(t, err)
	es := u.Entries()
	require.Len(t, es, 2)
	assert.Equal(t, "new.go", es[0].Path)
	assert.Equal(t, "older", *es[1].Prior)
	assert.NoFileExists(t, path)
}

func TestUndoLogCorruptFileMovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "undo.json")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	u, err := OpenUndoLog(path)
	require.Error(t, err)
	require.NotNil(t, u)
	assert.Contains(t, err.Error(), "was corrupt")
	assert.Empty(t, u.Entries())
	matches, _ := filepath.Glob(path + ".corrupt-*")
	require.Len(t, matches, 1)
	b, _ := os.ReadFile(matches[0])
	assert.Equal(t, "{not json", string(b))

	require.NoError(t, u.Record(UndoEntry{Tool: "mkdir", Op: "mkdir", Path: "x"}))
	u2, err := OpenUndoLog(path)
	require.NoError(t, err)
	require.Len(t, u2.Entries(), 1)
	assert.Equal(t, "x", u2.Entries()[0].Path)
	left, _ := filepath.Glob(filepath.Join(dir, ".undo.json.tmp-*"))
	assert.Empty(t, left, "no temp files are left behind")
}

func TestUndoLogBounds(t *testing.T) {
	u, err := OpenUndoLog(filepath.Join(t.TempDir(), "undo.json"))
	require.NoError(t, err)
	assert.Equal(t, maxUndoTotal, u.maxTotal)
	assert.Equal(t, maxUndoEntries, u.maxEntries)
	// Small bounds keep the test fast; the logic is the same.
	u.maxTotal, u.maxEntries = 6000, 20
	for i := 0; i < 10; i++ {
		e := UndoEntry{Tool: "patch", Op: "edit", Path: "f"}
		prior := []byte(strings.Repeat("x", 1000))
		PriorContent(&e, prior)
		SetWrote(&e, prior, append([]byte("y\n"), prior...))
		require.NoError(t, u.Record(e))
		assert.LessOrEqual(t, undoDiskSize(t, u), int64(u.maxTotal), "the bound counts the bytes on disk")
	}
	kept := 0
	entries := u.Entries()
	for _, e := range entries {
		if e.Prior != nil {
			kept++
			assert.NotNil(t, e.Wrote)
		} else {
			assert.Contains(t, e.PriorOmitted, "dropped")
			assert.Nil(t, e.Wrote, "what the change wrote goes with its prior content")
		}
	}
	assert.Equal(t, 10, len(entries), "entries lose their content before they go")
	assert.True(t, kept >= 3 && kept < 10, "kept %d", kept)
	for i := 0; i < kept; i++ {
		assert.NotNil(t, entries[i].Prior, "the newest entries keep their content")
	}
	for i := 0; i < 30; i++ {
		require.NoError(t, u.Record(UndoEntry{Tool: "mkdir", Op: "mkdir", Path: "d"}))
	}
	assert.Len(t, u.Entries(), 20)

	e := UndoEntry{}
	PriorContent(&e, make([]byte, MaxUndoContent+1))
	assert.Nil(t, e.Prior)
	assert.Contains(t, e.PriorOmitted, "too large")
}

// undoDiskSize is what the undo log takes on disk.
func undoDiskSize(t *testing.T, u *UndoLog) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(u.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, err := d.Info()
			if err == nil {
				n += fi.Size()
			}
		}
		return err
	}))
	return n
}

// What a change wrote is kept as the line edits of its prior content and
// rebuilt byte for byte: text, CRLF, a last line without its end, binary
// bytes, a create (no prior), an emptied file. It is not kept without the
// prior content, and not trusted when it does not rebuild what After says.
func TestWroteRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name         string
		prior, after string
		existed      bool
	}{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", true},
		{"lines added and removed", "a\nb\nc\nd\n", "x\na\nc\nd\ny\nz\n", true},
		{"CRLF", "a\r\nb\r\n", "a\r\nB\r\nc\r\n", true},
		{"no end on the last line", "a\nb", "a\nb\nc", true},
		{"binary bytes", "a\n\xff\x00\n", "a\n\xfe\x01\n", true},
		{"create", "", "new\nfile\n", false},
		{"emptied", "a\nb\n", "", true},
		{"unchanged", "a\n", "a\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := UndoEntry{Op: "edit", After: ContentHash([]byte(tc.after))}
			if tc.existed {
				PriorContent(&e, []byte(tc.prior))
			}
			SetWrote(&e, []byte(tc.prior), []byte(tc.after))
			require.NotNil(t, e.Wrote)
			data, err := encodeEntry(e)
			require.NoError(t, err)
			var back UndoEntry
			require.NoError(t, json.Unmarshal(data, &back))
			got, ok := WroteBytes(back, []byte(tc.prior))
			require.True(t, ok)
			assert.Equal(t, tc.after, string(got))

			all := e
			SetWroteAll(&all, []byte(tc.prior), []byte(tc.after))
			got, ok = WroteBytes(all, []byte(tc.prior))
			require.True(t, ok)
			assert.Equal(t, tc.after, string(got))
		})
	}
	e := UndoEntry{Op: "edit", After: ContentHash([]byte("b\n"))}
	PriorContent(&e, []byte("a\n"))
	SetWrote(&e, []byte("a\n"), []byte("b\n"))
	_, ok := WroteBytes(e, []byte("other\nprior\n"))
	assert.False(t, ok, "edits over another prior do not rebuild what After says")
	e.After = ""
	_, ok = WroteBytes(e, []byte("x\n"))
	assert.True(t, ok, "without After the edits are taken as they are")
	_, ok = WroteBytes(e, []byte(""))
	assert.False(t, ok, "edits beyond the prior's lines")

	big := UndoEntry{Op: "edit", Existed: true, PriorOmitted: "too large"}
	SetWrote(&big, []byte("a\n"), []byte("b\n"))
	assert.Nil(t, big.Wrote, "no prior content kept: the edits could not be applied")
}
