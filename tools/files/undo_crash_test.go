package files

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

var undoCrashChild = toolstest.CrashChild{Test: "TestUndoCrashChild", Env: "FIDO_UNDO_CRASH_CHILD"}

// TestUndoCrashChild is the child of TestUndoSurvivesKill9: it overwrites
// and edits a.txt with patch as fast as it can until it is killed.
func TestUndoCrashChild(t *testing.T) {
	spec := undoCrashChild.Child(t)
	root, state, _ := strings.Cut(spec, "|")
	undo, err := workspace.OpenUndoLog(filepath.Join(state, "undo.json"))
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(3)
	}
	ws, err := workspace.New(root, nil, undo)
	if err != nil {
		fmt.Println("workspace failed:", err)
		os.Exit(3)
	}
	reg, _ := tools.NewRegistry(Tools(ws)...)
	fmt.Println("ready")
	for i := 0; i < 100000; i++ {
		args := fmt.Sprintf(`{"operations":[{"path":"a.txt","content":"version %d\n%s"}]}`, i, strings.Repeat(`line\n`, i%50))
		if res := reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, "patch", []byte(args)); res.IsError {
			fmt.Println("patch failed:", res.Content)
			os.Exit(4)
		}
	}
}

func TestUndoSurvivesKill9(t *testing.T) {
	undoCrashChild.Parent(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	const rounds = 12
	reverted := 0
	for round := 0; round < rounds; round++ {
		root, state := t.TempDir(), t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("original\n"), 0o644))
		undoCrashChild.Kill(t, root+"|"+state, time.Duration(20_000+rng.IntN(200_000))*time.Microsecond)

		undo, err := workspace.OpenUndoLog(filepath.Join(state, "undo.json"))
		require.NoError(t, err)
		temps, _ := filepath.Glob(filepath.Join(undo.Dir(), ".*.tmp"))
		assert.Empty(t, temps, "round %d: opening the log removes the killed writer's temp files", round)
		entries := undo.Entries()
		if len(entries) == 0 {
			continue // killed before its first patch
		}
		now, err := os.ReadFile(filepath.Join(root, "a.txt"))
		require.NoError(t, err)
		newest := entries[0]
		applied := workspace.ContentHash(now) == newest.After
		ws, err := workspace.New(root, nil, undo)
		require.NoError(t, err)
		notYet := newest.Pending && ws.NeverApplied(newest, filepath.Join(root, "a.txt"))
		require.True(t, applied || notYet,
			"round %d: the file's content (%q) has no undo entry (newest: pending=%v)", round, headLine(now), newest.Pending)

		// Undo restores the content before the newest change that happened.
		var want []byte
		if applied {
			want, err = workspace.PriorBytes(newest)
			require.NoError(t, err)
		}
		desc, err := ws.RevertLast(context.Background())
		require.NoError(t, err, "round %d", round)
		if applied {
			got, _ := os.ReadFile(filepath.Join(root, "a.txt"))
			assert.Equal(t, string(want), string(got), "round %d: %s", round, desc)
			reverted++
		} else {
			assert.Contains(t, desc, "nothing to revert")
		}
	}
	t.Logf("%d/%d rounds reverted the last change after kill -9", reverted, rounds)
}

func headLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
