package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// act is one change in a file's history for the table below: "fido" (as
// patch records it), "fido-old" (an entry of an older Fido: no Wrote),
// "pending" (recorded, never written: Fido died in between), "rm" (Fido
// deletes it), "user" (written by someone else) and "user-rm".
type act struct{ kind, content string }

const absent = "<absent>"

// history replays acts on f.txt of a fresh workspace.
func history(t *testing.T, initial string, acts []act) *Workspace {
	t.Helper()
	root := t.TempDir()
	undo, err := OpenUndoLog(filepath.Join(t.TempDir(), "undo.json"))
	require.NoError(t, err)
	ws, err := New(root, nil, undo)
	require.NoError(t, err)
	abs := filepath.Join(ws.Root, "f.txt")
	if initial != absent {
		require.NoError(t, os.WriteFile(abs, []byte(initial), 0o644))
	}
	for _, a := range acts {
		old, err := os.ReadFile(abs)
		existed := err == nil
		e := UndoEntry{Tool: "patch", Path: "f.txt", Conv: "c", Turn: 1, Op: "create"}
		if existed {
			e.Op = "edit"
			PriorContent(&e, old)
		}
		switch a.kind {
		case "user":
			require.NoError(t, os.WriteFile(abs, []byte(a.content), 0o644))
			continue
		case "user-rm":
			require.NoError(t, os.Remove(abs))
			continue
		case "rm":
			e.Tool, e.Op = "rm", "rm"
			require.NoError(t, os.Remove(abs))
			require.NoError(t, undo.Record(e))
			continue
		}
		e.After = ContentHash([]byte(a.content))
		if a.kind != "fido-old" {
			SetWrote(&e, old, []byte(a.content))
		}
		if a.kind == "pending" {
			require.NoError(t, undo.Begin(&e))
			continue
		}
		require.NoError(t, os.WriteFile(abs, []byte(a.content), 0o644))
		require.NoError(t, undo.Record(e))
	}
	return ws
}

// The review's 3-way logic over real undo entries: what is Fido's, what is
// someone else's, what a whole-file revert and a rewind do with it.
func TestChangedFileHistories(t *testing.T) {
	for _, tc := range []struct {
		name    string
		initial string
		acts    []act
		hunks   []FidoHunk // Start, End, Edited (Before not compared)
		err     string     // ChangedFile fails
		left    bool       // ChangedFiles leaves the file out
		revert  string     // RevertFile's result on disk, or the start of its error after "!"
		skipped string     // PlanRewind skips the file saying this
	}{
		{name: "the user edits a line between two hunks of Fido's", initial: "1\n2\n3\n4\n5\n",
			acts:  []act{{"fido", "1\nA\n3\nB\n5\n"}, {"user", "1\nA\nU\nB\n5\n"}},
			hunks: []FidoHunk{{Start: 1, End: 2}, {Start: 3, End: 4}}, revert: "1\n2\nU\n4\n5\n"},
		{name: "the user edits a line of Fido's", initial: "1\n2\n3\n",
			acts:  []act{{"fido", "1\nA\n3\n"}, {"user", "1\nA!\n3\n"}},
			hunks: []FidoHunk{{Start: 1, End: 2, Edited: true}}, revert: "!f.txt: line 2 was edited after Fido's change; nothing was changed",
			skipped: "f.txt: line 2 was edited after Fido's change (kept as it is)"},
		{name: "two turns of Fido's with the user's edit between them", initial: "1\n2\n3\n4\n5\n",
			acts:  []act{{"fido", "1\nA\n3\n4\n5\n"}, {"user", "1\nA\nU\n4\n5\n"}, {"fido", "1\nA\nU\n4\nB\n"}},
			hunks: []FidoHunk{{Start: 1, End: 2}, {Start: 4, End: 5}}, revert: "1\n2\nU\n4\n5\n"},
		{name: "an older Fido's entry, the file as it left it", initial: "1\n2\n3\n",
			acts: []act{{"fido-old", "1\nA\n3\n"}}, hunks: []FidoHunk{{Start: 1, End: 2}}, revert: "1\n2\n3\n"},
		{name: "older entries in a chain: each result is the next one's prior", initial: "1\n2\n3\n",
			acts: []act{{"fido-old", "1\nA\n3\n"}, {"fido-old", "1\nA\nB\n"}}, hunks: []FidoHunk{{Start: 1, End: 3}}, revert: "1\n2\n3\n"},
		{name: "an older Fido's entry, the file changed since: not told apart", initial: "1\n2\n3\n",
			acts: []act{{"fido-old", "1\nA\n3\n"}, {"user", "1\nA\nU\n"}}, err: "the undo log does not say what Fido wrote",
			skipped: "f.txt: the undo log does not say what Fido wrote"},
		{name: "a file Fido created", initial: absent,
			acts: []act{{"fido", "a\nb\n"}}, hunks: []FidoHunk{{Start: 0, End: 2}}, revert: absent},
		{name: "a file Fido created, the user appended a line", initial: absent,
			acts: []act{{"fido", "a\nb\n"}, {"user", "a\nb\nc\n"}}, hunks: []FidoHunk{{Start: 0, End: 2}},
			revert:  "!f.txt: Fido created it and it was changed since by someone else",
			skipped: "f.txt: Fido created it and it was changed since by someone else (kept as it is)"},
		{name: "a file Fido deleted", initial: "x\ny\n",
			acts: []act{{"rm", ""}}, hunks: []FidoHunk{{Start: 0, End: 0}}, revert: "x\ny\n"},
		{name: "a file Fido edited, then deleted", initial: "x\ny\n",
			acts: []act{{"fido", "x\nY\n"}, {"user", "u\nY\n"}, {"rm", ""}}, hunks: []FidoHunk{{Start: 0, End: 0}}, revert: "u\ny\n"},
		{name: "a file Fido deleted is back", initial: "x\n",
			acts: []act{{"rm", ""}, {"user", "z\n"}}, hunks: []FidoHunk{{Start: 0, End: 1, Edited: true}},
			revert:  "!f.txt: line 1 was edited after Fido's change",
			skipped: "f.txt: line 1 was edited after Fido's change (kept as it is)"},
		{name: "the user deleted the file Fido edited", initial: "1\n2\n",
			acts: []act{{"fido", "1\nA\n"}, {"user-rm", ""}}, hunks: []FidoHunk{{Start: 0, End: 0, Edited: true}}, left: true, skipped: "f.txt: deleted since Fido's change (kept deleted)"},
		{name: "the user put Fido's line back by hand", initial: "1\n2\n",
			acts: []act{{"fido", "1\nA\n"}, {"user", "1\n2\n"}}, left: true},
		{name: "Fido stopped between recording and writing", initial: "1\n2\n",
			acts: []act{{"pending", "1\nA\n"}}, left: true},
		{name: "the user appends to Fido's last line, which had no line end", initial: "1\n2",
			acts: []act{{"fido", "1\nX"}, {"user", "1\nX\n3\n"}}, hunks: []FidoHunk{{Start: 1, End: 3, Edited: true}},
			revert:  "!f.txt: lines 2-3 were edited after Fido's change",
			skipped: "f.txt: lines 2-3 were edited after Fido's change (kept as it is)"},
		{name: "CRLF lines", initial: "1\r\n2\r\n3\r\n",
			acts:  []act{{"fido", "1\r\nA\r\n3\r\n"}, {"user", "U\r\nA\r\n3\r\n"}},
			hunks: []FidoHunk{{Start: 1, End: 2}}, revert: "U\r\n2\r\n3\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := history(t, tc.initial, tc.acts)
			entries := ws.Undo.Entries()
			var chain []UndoEntry
			for i := len(entries) - 1; i >= 0; i-- {
				chain = append(chain, entries[i])
			}
			f, err := ws.ChangedFile("f.txt", chain)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
			} else {
				require.NoError(t, err)
				var got []FidoHunk
				for _, h := range f.Hunks {
					got = append(got, FidoHunk{Start: h.Start, End: h.End, Edited: h.Edited})
				}
				assert.Equal(t, tc.hunks, got)
			}
			files, _ := ws.ChangedFiles(entries)
			assert.Equal(t, tc.left || tc.err != "", len(files) == 0, "left out of the review")

			plan := ws.PlanRewind(context.Background(), entries)
			if tc.skipped != "" {
				require.Len(t, plan.Skipped, 1)
				assert.True(t, strings.HasPrefix(plan.Skipped[0], tc.skipped), plan.Skipped[0])
				assert.Empty(t, plan.Steps)
			} else {
				assert.Empty(t, plan.Skipped)
			}
			if tc.revert == "" || len(files) == 0 {
				return
			}
			before := read(t, ws)
			_, err = ws.RevertFile(context.Background(), files[0], UndoEntry{Conv: "c", Turn: 1})
			if strings.HasPrefix(tc.revert, "!") {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.revert[1:])
				assert.Equal(t, before, read(t, ws), "a refused revert changes nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.revert, read(t, ws))
			again, _ := ws.ChangedFiles(ws.Undo.Entries())
			assert.Empty(t, again, "nothing of Fido's left after the revert")

			// The rewind's plan, made before the revert, would have written
			// the same (it is refused now: the file changed since the plan).
			if len(plan.Steps) == 1 {
				want := absent
				if plan.Steps[0].Exists {
					want = string(plan.Steps[0].Content)
				}
				assert.Equal(t, tc.revert, want)
				_, failed := ws.ApplyRewind(context.Background(), plan, UndoEntry{})
				if tc.revert != before {
					assert.Len(t, failed, 1, "a step over a file changed since the plan is refused")
				}
			}
		})
	}
}

func read(t *testing.T, ws *Workspace) string {
	data, err := os.ReadFile(filepath.Join(ws.Root, "f.txt"))
	if os.IsNotExist(err) {
		return absent
	}
	require.NoError(t, err)
	return string(data)
}
