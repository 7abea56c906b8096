package nvim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// copyPlugin copies the plugin's runtime files (no bin/) to dir, as a
// plugin manager's checkout before its build step ran.
func copyPlugin(t *testing.T, dir string) {
	t.Helper()
	root := nvimtest.RepoRoot(t)
	for _, sub := range []string{"lua", "plugin", "doc", "syntax"} {
		out, err := exec.Command("cp", "-r", filepath.Join(root, sub), filepath.Join(dir, sub)).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	_ = os.Remove(filepath.Join(dir, "doc", "tags"))
}

// Without a binary, :Fido says in one line what to run (:Lazy build fido
// under lazy.nvim, make otherwise), and raises no error (no stack trace from
// a plugin manager's command handler).
func TestMissingBinaryIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, lazy, want string
	}{
		{"lazy", `package.loaded["lazy"] = {}`, "Fido: bin/fido not found: run :Lazy build fido"},
		{"manual", ``, "Fido: bin/fido not found: run `make` in "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := filepath.Join(t.TempDir(), "fido")
			require.NoError(t, os.MkdirAll(plugin, 0o755))
			copyPlugin(t, plugin)
			n := nvimtest.Start(t, nvimtest.Options{Args: []string{"--cmd", "set rtp^=" + plugin},
				Env: []string{"PATH=/usr/bin:/bin"}})
			n.Lua(t, nil, tc.lazy+`
_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end`)
			// As lazy.nvim runs a command: inside pcall, where an error message
			// becomes an exception it reports with a traceback.
			var res []any
			n.Lua(t, &res, `local ok, err = pcall(vim.cmd, "Fido hello") return { ok, tostring(err) }`)
			require.Len(t, res, 2)
			assert.Equal(t, true, res[0], "no error raised: %v", res[1])
			n.WaitFor(t, `#_G.notes > 0`, 2*time.Second)
			var notes []map[string]any
			n.Lua(t, &notes, `return _G.notes`)
			require.Len(t, notes, 1)
			msg, _ := notes[0]["msg"].(string)
			assert.True(t, strings.HasPrefix(msg, tc.want), msg)
			assert.NotContains(t, msg, "\n", "one line")
			assert.NotContains(t, msg, "traceback")
		})
	}
}

// :help fido works after the README's manual install: `make` generates
// doc/tags, and a checkout without it gets them when the plugin loads.
func TestHelpFidoAfterInstall(t *testing.T) {
	t.Run("make", func(t *testing.T) {
		plugin := filepath.Join(t.TempDir(), "fido")
		require.NoError(t, os.MkdirAll(plugin, 0o755))
		copyPlugin(t, plugin)
		mk, err := os.ReadFile(filepath.Join(nvimtest.RepoRoot(t), "Makefile"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(plugin, "Makefile"), mk, 0o644))
		cmd := exec.Command("make", "doc/tags", "NVIM_BIN="+nvimtest.Require(t))
		cmd.Dir = plugin
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		tags, err := os.ReadFile(filepath.Join(plugin, "doc", "tags"))
		require.NoError(t, err)
		assert.Contains(t, string(tags), "fido.txt")
		assert.Contains(t, string(tags), ":FidoApprove")
	})
	t.Run("plugin load", func(t *testing.T) {
		plugin := filepath.Join(t.TempDir(), "fido")
		require.NoError(t, os.MkdirAll(plugin, 0o755))
		copyPlugin(t, plugin)
		// --clean loads plugin/ files from 'runtimepath' after --cmd.
		n := nvimtest.Start(t, nvimtest.Options{Args: []string{"--cmd", "set rtp^=" + plugin}})
		require.NoError(t, n.Command("help fido"))
		var name string
		n.Lua(t, &name, `return vim.api.nvim_buf_get_name(0)`)
		assert.Equal(t, filepath.Join(plugin, "doc", "fido.txt"), name)
		require.NoError(t, n.Command("help :FidoShow"))
	})
}

// A binary the user named that is not there is not ignored without a word:
// one line says which binary runs instead, or that none was found.
func TestWrongBinaryIsSaid(t *testing.T) {
	t.Run("another runs", func(t *testing.T) {
		n, _ := startFido(t) // FIDO_BINARY names the built fido
		var bin string
		n.Lua(t, &bin, `return vim.env.FIDO_BINARY`)
		n.Lua(t, nil, `require("fido").setup({ binary = "/wrong/path" })`)
		require.NoError(t, n.Command("Fido"))
		n.WaitFor(t, `require("fido.host").ready()`, 10*time.Second, `_G.fido_notes`)
		n.WaitFor(t, `#_G.fido_notes > 0`, 2*time.Second)
		var notes []map[string]any
		n.Lua(t, &notes, `return _G.fido_notes`)
		require.Len(t, notes, 1, "said once")
		msg, _ := notes[0]["msg"].(string)
		assert.Equal(t, "Fido: binary /wrong/path does not exist; running "+bin+" instead", msg)
		assert.EqualValues(t, 3, notes[0]["level"], "a warning") // vim.log.levels.WARN
		require.NoError(t, n.Command("Fido hello again"))
		n.Lua(t, &notes, `return _G.fido_notes`)
		assert.Len(t, notes, 1, "not said again")
	})
	t.Run("none found", func(t *testing.T) {
		plugin := filepath.Join(t.TempDir(), "fido")
		require.NoError(t, os.MkdirAll(plugin, 0o755))
		copyPlugin(t, plugin)
		n := nvimtest.Start(t, nvimtest.Options{Args: []string{"--cmd", "set rtp^=" + plugin},
			Env: []string{"PATH=/usr/bin:/bin"}})
		notDir := filepath.Join(t.TempDir(), "fido-not-executable")
		require.NoError(t, os.WriteFile(notDir, []byte("#!/bin/sh\n"), 0o644))
		n.Lua(t, nil, `_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end
require("fido").setup({ binary = ... })`, notDir)
		n.Lua(t, nil, `pcall(vim.cmd, "Fido hello")`)
		n.WaitFor(t, `#_G.notes > 0`, 2*time.Second)
		var notes []map[string]any
		n.Lua(t, &notes, `return _G.notes`)
		require.Len(t, notes, 1)
		msg, _ := notes[0]["msg"].(string)
		assert.True(t, strings.HasPrefix(msg, "Fido: binary "+notDir+" is not executable, and no other fido binary was found (bin/fido not found: run `make` in "), msg)
		assert.NotContains(t, msg, "\n", "one line")
	})
}
