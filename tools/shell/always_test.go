package shell

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/toolstest"
)

// acceptingPrompter picks the first item that starts with pick and
// accepts whatever an input proposes, as a user pressing <CR> would.
type acceptingPrompter struct {
	mu      sync.Mutex
	pick    string
	selects [][]string
	inputs  []string
}

func (p *acceptingPrompter) Select(_ context.Context, _ string, items []string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.selects = append(p.selects, items)
	for i, it := range items {
		if strings.HasPrefix(it, p.pick) {
			return i, nil
		}
	}
	return -1, nil
}

func (p *acceptingPrompter) Input(_ context.Context, prompt, def string) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inputs = append(p.inputs, prompt+def)
	return def, true, nil
}

func (p *acceptingPrompter) asked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.selects)
}

// issue31Script is a multi-line script like the one of issue 31 item 6,
// whose first word is set.
const issue31Script = `set -eu
mkdir -p build
echo one > build/one.txt
echo two >> build/one.txt
cat build/one.txt | wc -l > build/count.txt
rm -f build/tmp.txt
ls build`

// "Always this session" on a multi-line script proposes a rule for that
// script, and the identical script then runs without a question; another
// script still asks.
func TestBashExecAlwaysOnAScriptStopsAsking(t *testing.T) {
	for _, tc := range []struct{ name, pick string }{
		{"session", BashAlwaysSession},
		{"workspace", BashAlwaysWorkspace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, _ := toolstest.Workspace(t, nil)
			path := filepath.Join(t.TempDir(), "permissions.json")
			store, _ := permission.OpenStore(path, nil)
			p := &acceptingPrompter{pick: tc.pick}
			tool := NewBashTool(ws, p).WithPermissions(store)
			run := func(cmd string) {
				res := toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": cmd})
				require.False(t, res.IsError, res.Content)
			}

			run(issue31Script)
			require.Equal(t, 1, p.asked())
			assert.Contains(t, p.selects[0], tc.pick+"this exact script (7 lines)", "the choice names the rule it adds")
			assert.Equal(t, "2\n", toolstest.ReadFile(t, ws, "build/count.txt"))

			run(issue31Script)
			assert.Equal(t, 1, p.asked(), "the identical script runs without asking again")

			run(issue31Script + "\necho three")
			assert.Equal(t, 2, p.asked(), "another script still asks")

			if tc.pick == BashAlwaysWorkspace {
				again, _ := permission.OpenStore(path, nil)
				p2 := &acceptingPrompter{pick: BashDeny}
				res := toolstest.Invoke(t, context.Background(), NewBashTool(ws, p2).WithPermissions(again), toolstest.Main, map[string]any{"command": issue31Script})
				require.False(t, res.IsError, res.Content)
				assert.Zero(t, p2.asked(), "the workspace rule holds after a restart")
			}
		})
	}
}

// A single command keeps its editable prefix proposal.
func TestBashExecAlwaysOnACommandProposesItsPrefix(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	store, _ := permission.OpenStore("", nil)
	p := &acceptingPrompter{pick: BashAlwaysSession}
	tool := NewBashTool(ws, p).WithPermissions(store)
	for _, cmd := range []string{"echo one > a.txt", "echo two > b.txt"} {
		res := toolstest.Invoke(t, context.Background(), tool, toolstest.Main, map[string]any{"command": cmd})
		require.False(t, res.IsError, res.Content)
	}
	assert.Equal(t, 1, p.asked())
	assert.Contains(t, p.selects[0], BashAlwaysSession+"echo")
	assert.Equal(t, []string{"Allow commands that start with: echo"}, p.inputs)
}
