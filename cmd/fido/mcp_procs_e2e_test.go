//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markedProcs lists the live processes (zombies excluded) whose environment
// holds marker.
func markedProcs(marker string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || !alive(pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err == nil && bytes.Contains(env, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}

func newMarker(t *testing.T) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	m := "FIDO_E2E_MARK_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		for _, pid := range markedProcs(m) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return m
}

// forkingServer writes a .mcp.json whose server forks n sleeping children
// (one of them in a session of its own) and then serves MCP (this test
// binary); each process carries marker in its environment.
func forkingServer(t *testing.T, dir, marker string, n int) {
	exe, err := os.Executable()
	require.NoError(t, err)
	// One child leaves the process group and the session (setsid).
	script := `setsid sleep 600 & i=1; while [ $i -lt ` + strconv.Itoa(n) + ` ]; do sleep 600 & i=$((i+1)); done; exec "$0" -test.run='^$'`
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"forker": map[string]any{"command": "sh", "args": []string{"-c", script, exe},
			"env": map[string]string{e2eMCPServerEnv: "1", "FIDO_E2E_MARKER": marker}},
	}})
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644))
}

// A trusted MCP server that forks 150 children leaves nothing running once
// Fido ends: after :qa, and after the host is killed with SIGKILL (no
// cleanup of its own can run then); /mcp reload ends the old tree before
// the server starts again.
func TestE2EMCPServerTreeEndsWithFido(t *testing.T) {
	const children = 150
	for _, how := range []string{"qa", "host SIGKILL", "mcp reload"} {
		t.Run(how, func(t *testing.T) {
			marker := newMarker(t)
			f := startFido(t, t.TempDir())
			forkingServer(t, f.Dir, marker, children)
			f.Lua(t, nil, `vim.ui.select = function(items, opts, cb)
  for i, it in ipairs(items) do if it == "Trust and start" then return cb(it, i) end end
  cb(nil, nil)
end`)
			require.NoError(t, f.Command("Fido"))
			require.Eventually(t, func() bool { return len(markedProcs(marker)) >= children+1 }, 20*time.Second, 50*time.Millisecond,
				"the server and its %d children run", children)
			f.WaitFor(t, `(require("fido.mcp").state.servers[1] or ""):find("ready") ~= nil`, 20*time.Second, `require("fido.mcp").state`)
			var hostPid int
			f.Lua(t, &hostPid, `return require("fido.host").pid()`)
			require.NotZero(t, hostPid)

			start := time.Now()
			switch how {
			case "qa":
				f.Lua(t, nil, `vim.schedule(function() vim.cmd("qa!") end)`)
			case "host SIGKILL":
				require.NoError(t, syscall.Kill(hostPid, syscall.SIGKILL))
			case "mcp reload":
				old := markedProcs(marker)
				require.NoError(t, f.Command("Fido /mcp reload"))
				oldLeft := func() []int {
					var l []int
					for _, pid := range old {
						if alive(pid) {
							l = append(l, pid)
						}
					}
					return l
				}
				require.Eventually(t, func() bool { return len(oldLeft()) == 0 }, 5*time.Second, 20*time.Millisecond,
					"the old tree ended (%d left)", len(oldLeft()))
				t.Logf("mcp reload: the old tree ended after %s", time.Since(start).Round(time.Millisecond))
				require.Eventually(t, func() bool { return len(markedProcs(marker)) >= children+1 }, 20*time.Second, 50*time.Millisecond,
					"the server started again (its entry is still trusted)")
				f.waitTranscript(t, "MCP servers restarted", 5*time.Second)
				start = time.Now()
				f.Lua(t, nil, `vim.schedule(function() vim.cmd("qa!") end)`)
			}
			for len(markedProcs(marker)) > 0 && time.Since(start) < 5*time.Second {
				time.Sleep(20 * time.Millisecond)
			}
			left := markedProcs(marker)
			assert.Empty(t, left, "%d of the server's processes are left after %s", len(left), how)
			t.Logf("%s: %d left after %s", how, len(left), time.Since(start).Round(time.Millisecond))
		})
	}
}
