//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// stallProbe measures Neovim's nvim_eval round trip every 10 ms while a
// hostile file is being handled: the longest is how long Neovim stalled.
type stallProbe struct {
	stop, done chan struct{}
	once       sync.Once
	mu         sync.Mutex
	max        time.Duration
	n          int
}

func probeStalls(t *testing.T, n *nvimtest.Nvim) *stallProbe {
	p := &stallProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			start := time.Now()
			var one int
			if err := n.Eval("1", &one); err != nil {
				return
			}
			d := time.Since(start)
			p.mu.Lock()
			p.n++
			p.max = max(p.max, d)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() { p.end() })
	return p
}

// end stops the probe and returns the longest round trip and the count.
func (p *stallProbe) end() (time.Duration, int) {
	p.once.Do(func() { close(p.stop) })
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max, p.n
}

func sparseFile(t *testing.T, p string, size int64, mode os.FileMode) {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, mode)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
}

// A hostile clone, opened in a fresh workspace: each file below once hung
// the session, killed the host or froze Neovim. Now the host stays alive,
// Neovim answers every nvim_eval within 100 ms while Fido handles the file,
// and the user reads one clear message.
func TestE2EHostileProjectFiles(t *testing.T) {
	hello := func(t *testing.T, f *fido) {
		f.srv.Enqueue(llmtest.Text("hello back"))
		require.NoError(t, f.Command("Fido hello"))
		f.waitTranscript(t, "hello back", 20*time.Second)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, ws string)
		act   func(t *testing.T, f *fido)
		check func(t *testing.T, f *fido)
	}{
		{name: ".mcp.json is a FIFO",
			setup: func(t *testing.T, ws string) {
				require.NoError(t, syscall.Mkfifo(filepath.Join(ws, ".mcp.json"), 0o644))
			},
			act: hello,
			check: func(t *testing.T, f *fido) {
				f.waitTranscript(t, ".mcp.json: not read: not a regular file (it is a FIFO)", 5*time.Second)
			}},
		{name: ".mcp.json is a symlink to /dev/zero",
			setup: func(t *testing.T, ws string) {
				require.NoError(t, os.Symlink("/dev/zero", filepath.Join(ws, ".mcp.json")))
			},
			act: hello,
			check: func(t *testing.T, f *fido) {
				f.waitTranscript(t, ".mcp.json: not read: resolves outside its directory through a symlink", 5*time.Second)
			}},
		{name: ".mcp.json is a sparse 4 GB file",
			setup: func(t *testing.T, ws string) { sparseFile(t, filepath.Join(ws, ".mcp.json"), 4<<30, 0o644) },
			act:   hello,
			check: func(t *testing.T, f *fido) {
				f.waitTranscript(t, ".mcp.json: not read: file too large: 4294967296 bytes", 5*time.Second)
			}},
		{name: "server commands are /dev/zero and a sparse 4 GB file",
			setup: func(t *testing.T, ws string) {
				require.NoError(t, os.Symlink("/dev/zero", filepath.Join(ws, "zero")))
				sparseFile(t, filepath.Join(ws, "big"), 4<<30, 0o755)
				cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
					"zero": map[string]any{"command": "./zero"}, "big": map[string]any{"command": "./big"}}})
				require.NoError(t, os.WriteFile(filepath.Join(ws, ".mcp.json"), cfg, 0o644))
			},
			act: func(t *testing.T, f *fido) {
				f.answerTrust(t, "Not now")
				hello(t, f)
			},
			check: func(t *testing.T, f *fido) {
				var asked []string
				f.Lua(t, &asked, `return _G.trust_asked`)
				require.Len(t, asked, 1, "the trust question comes first; nothing runs or is read before it")
				assert.Contains(t, asked[0], "runs: ./zero")
				assert.Contains(t, asked[0], "runs: ./big")
				require.NoError(t, f.Command("Fido /mcp"))
				f.waitTranscript(t, "zero (project): not trusted", 5*time.Second)
			}},
		{name: "lsp_hover on a FIFO",
			setup: func(t *testing.T, ws string) { require.NoError(t, syscall.Mkfifo(filepath.Join(ws, "pipe.go"), 0o644)) },
			act: func(t *testing.T, f *fido) {
				f.srv.Enqueue(
					llmtest.Reply().ToolCall("h1", "lsp_hover", `{"path":"pipe.go","line":1,"column":1}`, 1).Finish("tool_calls"),
					llmtest.Text("no hover"),
				)
				require.NoError(t, f.Command("Fido hover"))
				f.waitIdleAfter(t, 2)
			},
			check: func(t *testing.T, f *fido) {
				msgs := f.srv.Requests()[1].Get("messages").Array()
				assert.Contains(t, msgs[len(msgs)-1].Get("content").String(), "pipe.go is not a regular file (it is a FIFO)")
			}},
		{name: "300 nested AGENTS.md of 32 KB",
			setup: func(t *testing.T, ws string) {
				dir := ws
				rules := strings.Repeat("rule ", 32<<10/5)
				for i := 0; i < 300; i++ {
					dir = filepath.Join(dir, "d")
					require.NoError(t, os.MkdirAll(dir, 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(rules), 0o644))
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n"), 0o644))
			},
			act: func(t *testing.T, f *fido) {
				args, _ := json.Marshal(map[string]string{"path": strings.Repeat("d/", 300) + "x.go"})
				f.srv.Enqueue(
					llmtest.Reply().ToolCall("r1", "read_file", string(args), 1).Finish("tool_calls"),
					llmtest.Text("read"),
				)
				require.NoError(t, f.Command("Fido read the deepest file"))
				f.waitIdleAfter(t, 2)
			},
			check: func(t *testing.T, f *fido) {
				body := f.srv.Requests()[1].Body
				t.Logf("the request after the read is %d bytes", len(body))
				assert.Less(t, len(body), 200<<10, "bounded (it was about 10 MB)")
				assert.Contains(t, string(body), "nested instructions left out")
			}},
		{name: "50,000 custom command files",
			setup: func(t *testing.T, ws string) {
				dir := filepath.Join(ws, ".fido", "commands")
				require.NoError(t, os.MkdirAll(dir, 0o755))
				for i := 0; i < 50000; i++ {
					require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%05d.md", i)), []byte("---\ndescription: a command\n---\nbody\n"), 0o644))
				}
			},
			act: func(t *testing.T, f *fido) {
				hello(t, f)
				for i := 0; i < 5; i++ {
					var took float64
					var n int
					f.Lua(t, &took, `local t0 = vim.loop.hrtime()
_G.ncmds = #require("fido.commands").all()
return (vim.loop.hrtime() - t0) / 1e6`)
					f.Lua(t, &n, `return _G.ncmds`)
					t.Logf("completion %d: %.1f ms, %d commands", i+1, took, n)
				}
			},
			check: func(t *testing.T, f *fido) {
				var n int
				f.Lua(t, &n, `return _G.ncmds`)
				assert.LessOrEqual(t, n, 600, "capped")
				f.WaitFor(t, `vim.inspect(_G.fido_notes):find("Fido lists at most 500 custom commands", 1, true) ~= nil`, 5*time.Second, `_G.fido_notes`)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			tc.setup(t, ws)
			f := startFido(t, t.TempDir(), ws)
			probe := probeStalls(t, f.Nvim)
			tc.act(t, f)
			tc.check(t, f)
			longest, n := probe.end()
			t.Logf("longest nvim_eval round trip: %s (%d probes)", longest.Round(time.Millisecond), n)
			assert.Less(t, longest, 100*time.Millisecond, "Neovim stayed responsive")
			var hostPid int
			f.Lua(t, &hostPid, `return require("fido.host").pid() or 0`)
			assert.True(t, hostPid > 0 && alive(hostPid), "the host is alive")
		})
	}
}
