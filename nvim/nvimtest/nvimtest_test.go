package nvimtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartIsolatesAndLoadsPlugin(t *testing.T) {
	n := Start(t, Options{Env: []string{"FIDO_TEST_MARK=1"}})

	var rtp string
	n.Lua(t, &rtp, "return vim.o.runtimepath")
	assert.True(t, strings.HasPrefix(rtp, RepoRoot(t)+","), "runtimepath %q starts with the repo", rtp)

	var env map[string]string
	n.Lua(t, &env, `return { mark = vim.env.FIDO_TEST_MARK or "", state = vim.env.FIDO_STATE_DIR or "",
		key = vim.env.OPENROUTER_API_KEY or "", cache = vim.fn.stdpath("cache"), cwd = vim.fn.getcwd() }`)
	assert.Equal(t, "1", env["mark"])
	assert.Empty(t, env["key"], "inherited API key must be stripped")
	assert.Equal(t, n.StateDir, env["state"])
	assert.Equal(t, filepath.Join(n.Tmp, "cache", "nvim"), env["cache"])
	assert.Equal(t, n.Dir, env["cwd"])
}

func TestWaitForAndLines(t *testing.T) {
	n := Start(t, Options{})
	n.Lua(t, nil, `vim.defer_fn(function()
		local b = vim.api.nvim_create_buf(true, true)
		vim.api.nvim_buf_set_name(b, "fido://probe")
		vim.api.nvim_buf_set_lines(b, 0, -1, false, { "a", "b" })
		vim.g.probe_done = true
	end, 50)`)
	require.False(t, n.Bool(t, "vim.g.probe_done"), "deferred function ran synchronously")
	n.WaitFor(t, "vim.g.probe_done", 2*time.Second)
	assert.Equal(t, []string{"a", "b"}, n.Lines(t, "fido://probe"))
	assert.Error(t, n.Poll("vim.g.never_set", 30*time.Millisecond))
}

func TestListen(t *testing.T) {
	n := Start(t, Options{Listen: true})
	_, err := os.Stat(n.Addr)
	assert.NoError(t, err)
}
