package plan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
)

var crashChild = toolstest.CrashChild{Test: "TestCrashChild", Env: "FIDO_PLAN_CRASH_CHILD"}

// TestCrashChild is the child of TestCrashDuringUpdates: it does 1,000 rapid
// updates of the plan file named by $FIDO_PLAN_CRASH_CHILD until it is killed.
func TestCrashChild(t *testing.T) {
	path := crashChild.Child(t)
	s, notice, err := OpenStore(path)
	if err != nil || notice != "" {
		fmt.Printf("open failed: %v %s\n", err, notice)
		os.Exit(3)
	}
	fmt.Println("ready")
	for i := 0; i < 1000; i++ {
		n := 1 + i%MaxItems
		items := make([]Item, n)
		for k := range items {
			it := Item{ID: fmt.Sprintf("step-%d", k), Title: fmt.Sprintf("update %d item %d", i, k), Status: Done,
				Details: strings.Repeat("details ", 1+k%40), Evidence: []string{fmt.Sprintf("run %d", i)}}
			switch {
			case k == n-1:
				it.Status, it.NextAction = InProgress, "keep going"
			case k > 0 && k%3 == 0:
				it.Status, it.NextAction, it.Dependencies = Pending, "later", []string{fmt.Sprintf("step-%d", k-1)}
			}
			items[k] = it
		}
		if _, err := s.Update(UpdateArgs{Reason: fmt.Sprintf("rapid update %d", i), Items: items}); err != nil {
			fmt.Printf("update failed: %v\n", err)
			os.Exit(4)
		}
	}
	fmt.Println("finished")
}

func TestCrashDuringUpdates(t *testing.T) {
	crashChild.Parent(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	lastVersion, killedMidway := 0, 0
	const rounds = 20
	for round := 0; round < rounds; round++ {
		if crashChild.Kill(t, path, time.Duration(rng.IntN(150_000))*time.Microsecond) {
			killedMidway++
		}

		// The file is always a complete, valid plan, never older than before.
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) && lastVersion == 0 {
			continue // killed before its first update
		}
		require.NoError(t, err, "round %d", round)
		var p Plan
		require.NoError(t, decodePlan(data, &p), "round %d: plan.json is not a complete valid plan:\n%s", round, data)
		assert.GreaterOrEqual(t, p.Version, lastVersion, "round %d", round)
		var i int
		_, err = fmt.Sscanf(p.Reason, "rapid update %d", &i)
		require.NoError(t, err)
		require.Len(t, p.Items, 1+i%MaxItems, "round %d", round)
		for k, it := range p.Items {
			assert.Equal(t, fmt.Sprintf("update %d item %d", i, k), it.Title, "round %d: one update's content, never a mix", round)
		}
		lastVersion = p.Version

		s, notice, err := OpenStore(path)
		require.NoError(t, err)
		assert.Empty(t, notice, "round %d: a killed writer never leaves a corrupt file", round)
		require.NotNil(t, s.Current())
		assert.Equal(t, p.Version, s.Version())
		temps, err := filepath.Glob(filepath.Join(dir, ".plan.json.*.tmp"))
		require.NoError(t, err)
		assert.Empty(t, temps, "round %d: opening removes the killed writer's temp files", round)
	}
	t.Logf("%d/%d children killed mid-run; final version %d", killedMidway, rounds, lastVersion)
	assert.Greater(t, killedMidway, rounds/2, "most kills must land during the updates")
	aside, err := filepath.Glob(path + ".corrupt-*")
	require.NoError(t, err)
	assert.Empty(t, aside)
}

const twoEnv = "FIDO_PLAN_TWO_CHILD"

// TestTwoProcessesChild is one of the two processes of
// TestTwoProcessesNeverLoseAnUpdate: it saves 30 plans, each retried on a
// stale refusal, and prints the version each was saved as.
func TestTwoProcessesChild(t *testing.T) {
	spec := os.Getenv(twoEnv)
	if spec == "" {
		t.Skip("only runs as a child of TestTwoProcessesNeverLoseAnUpdate")
	}
	name, path, _ := strings.Cut(spec, "=")
	s, _, err := OpenStore(path)
	if err != nil {
		fmt.Printf("open failed: %v\n", err)
		os.Exit(3)
	}
	for i := 0; i < 30; {
		p, err := s.Update(UpdateArgs{Reason: "r", Items: []Item{{ID: fmt.Sprintf("%s-%d", name, i), Title: "t", Status: Done}}})
		var stale *StaleError
		if errors.As(err, &stale) {
			continue
		}
		if err != nil {
			fmt.Printf("update failed: %v\n", err)
			os.Exit(4)
		}
		fmt.Printf("saved %d %s\n", p.Version, p.Items[0].ID)
		i++
	}
}

func TestTwoProcessesNeverLoseAnUpdate(t *testing.T) {
	if os.Getenv(twoEnv) != "" {
		t.Skip("child")
	}
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	outs := make([][]byte, 2)
	errs := make(chan error, 2)
	for i, name := range []string{"a", "b"} {
		go func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcessesChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), twoEnv+"="+name+"="+path)
			out, err := cmd.Output()
			outs[i] = out
			errs <- err
		}()
	}
	for range 2 {
		require.NoError(t, <-errs)
	}
	byVersion := map[int]string{}
	for _, out := range outs {
		for _, line := range strings.Split(string(out), "\n") {
			var v int
			var id string
			if _, err := fmt.Sscanf(line, "saved %d %s", &v, &id); err != nil {
				continue
			}
			prev, dup := byVersion[v]
			assert.False(t, dup, "version %d saved by both %s and %s", v, prev, id)
			byVersion[v] = id
		}
	}
	assert.Len(t, byVersion, 60, "all 60 updates were saved, each under its own version")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var p Plan
	require.NoError(t, decodePlan(data, &p))
	assert.Equal(t, 60, p.Version)
	assert.Equal(t, byVersion[60], p.Items[0].ID)
}
