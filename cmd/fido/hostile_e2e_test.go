package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// Opening Neovim in a hostile clone whose .gitignore is a FIFO used to block
// session start forever without a word. Now the first turn answers, and the
// user is told once that the file was skipped.
func TestE2EHostileGitignoreFIFO(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, ".gitignore"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644))
	f := startFido(t, t.TempDir(), ws)
	f.srv.Enqueue(llmtest.Text("hello back"))
	require.NoError(t, f.Command("Fido hello"))
	f.waitIdleAfter(t, 1)
	assert.Contains(t, f.transcript(t), "hello back")
	var notes string
	f.Lua(t, &notes, `return vim.inspect(_G.fido_notes or {})`)
	assert.Equal(t, 1, strings.Count(notes, "skipped .gitignore"), notes)
	assert.Contains(t, notes, "it is a FIFO")
}
