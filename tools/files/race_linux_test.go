//go:build linux

package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// TestSymlinkRaceNeverEscapes races every workspace tool against a process
// that keeps swapping the directory d for a symlink to a directory outside
// the workspace. Resolve may see the real directory and the operation the
// symlink; no operation may then read, write, create or delete anything
// outside. FIDO_RACE_SECONDS runs it longer by hand (default 2 s).
func TestSymlinkRaceNeverEscapes(t *testing.T) {
	if testing.Short() {
		t.Skip("race attack")
	}
	dur := 2 * time.Second
	if s := os.Getenv("FIDO_RACE_SECONDS"); s != "" {
		var n int
		_, err := fmt.Sscan(s, &n)
		require.NoError(t, err)
		dur = time.Duration(n) * time.Second
	}
	base := t.TempDir()
	root, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	outsideFiles := map[string]string{"victim.txt": "OUTSIDE\n", "secret.txt": "OUTSIDE-SECRET\n", "existing.txt": "OUTSIDE\n", "sub/f": "OUTSIDE\n"}
	toolstest.WriteTree(t, out, outsideFiles)
	toolstest.WriteTree(t, root, map[string]string{"d/secret.txt": "inside\n", "d/existing.txt": "inside\n", "d/sub/f": "inside\n"})
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	byName := map[string]tools.Tool{}
	for _, tl := range Tools(ws) {
		byName[tl.Name()] = tl
	}
	call := func(name string, args any) tools.Result {
		b, _ := json.Marshal(args)
		res, err := byName[name].Run(context.Background(), tools.Invocation{}, b)
		if err != nil {
			return tools.Result{Content: err.Error(), IsError: true}
		}
		return res
	}

	var (
		escapes, calls atomic.Int64
		mu             sync.Mutex // guards the outside tree while it is checked and restored
		kinds          = map[string]int{}
	)
	escaped := func(kind string) {
		escapes.Add(1)
		mu.Lock()
		kinds[kind]++
		mu.Unlock()
	}
	// checkOutside restores the outside tree and reports what changed.
	checkOutside := func(op string) {
		mu.Lock()
		defer mu.Unlock()
		for rel, want := range outsideFiles {
			p := filepath.Join(out, rel)
			if b, err := os.ReadFile(p); err != nil || string(b) != want {
				kinds[op+" changed or removed outside/"+rel]++
				escapes.Add(1)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(want), 0o644))
			}
		}
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			if _, ok := outsideFiles[e.Name()]; !ok && e.Name() != "sub" {
				kinds[op+" created outside/"+e.Name()]++
				escapes.Add(1)
				_ = os.RemoveAll(filepath.Join(out, e.Name()))
			}
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the attacker
		defer wg.Done()
		// d and the link trade places atomically, as fast as they can.
		d, link := filepath.Join(root, "d"), filepath.Join(root, "link")
		if err := os.Symlink(out, link); err != nil {
			panic(err)
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
		}
	}()
	workers := 2
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			made := fmt.Sprintf("d/made%d", w)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var op string
				switch i % 7 {
				case 0:
					op = "patch"
					call("patch", map[string]any{"operations": []map[string]any{{"path": "d/existing.txt", "content": "patched\n"}}})
				case 1:
					op = "patch+rm"
					call("patch", map[string]any{"operations": []map[string]any{{"path": "d/victim.txt", "content": "inside\n"}}})
					call("rm", map[string]any{"path": "d/victim.txt"})
				case 2:
					op = "mkdir+rmdir"
					call("mkdir", map[string]any{"path": "d/sub"})
					call("rmdir", map[string]any{"path": "d/sub"})
				case 3:
					op = "mkdir"
					call("mkdir", map[string]any{"path": made + "/x"})
					call("rmdir", map[string]any{"path": made})
				case 4:
					op = "read_file"
					if r := call("read_file", map[string]any{"path": "d/secret.txt"}); strings.Contains(r.Content, "OUTSIDE") {
						escaped("read_file returned outside content")
					}
				case 5:
					op = "ripgrep dir"
					if r := call("ripgrep", map[string]any{"pattern": "OUTSIDE", "path": "d"}); strings.Contains(r.Content, "OUTSIDE") && !r.IsError {
						escaped("ripgrep returned outside content")
					}
				case 6:
					op = "ripgrep file"
					if r := call("ripgrep", map[string]any{"pattern": "OUTSIDE", "path": "d/secret.txt"}); strings.Contains(r.Content, "OUTSIDE-SECRET") && !r.IsError {
						escaped("ripgrep returned outside content")
					}
				}
				calls.Add(1)
				checkOutside(op)
			}
		}(w)
	}
	time.Sleep(dur)
	close(stop)
	wg.Wait()
	checkOutside("final")
	t.Logf("%d racing calls in %v, %d escapes %v", calls.Load(), dur, escapes.Load(), kinds)
	assert.Zero(t, escapes.Load(), "escapes: %v", kinds)
}
