package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fido-nvim/fido/nvim/nvimtest"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bin/fido answers `sandbox-exec` as the helper: a command run through it
// works in the workspace and is refused outside it, with the refusal named.
func TestSandboxExecSubcommand(t *testing.T) {
	bin := nvimtest.FidoBinary(t)
	if s := sandbox.Probe(); !s.Enforced {
		t.Skip("no sandbox here: " + s.Reason)
	}
	ws, tmp, outside := t.TempDir(), t.TempDir(), t.TempDir()
	// The top level of a workspace without .git is read-only (a created .git
	// would run its hooks outside the sandbox later): work in a subdirectory.
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	c, err := sandbox.CommandWithHelper(context.Background(), bin, sandbox.Policy{Workspace: ws, TempDir: tmp},
		"bash", "-c", `echo in > sub/inside; echo out > "$1/outside"; cat sub/inside`, "bash", outside)
	require.NoError(t, err)
	var out bytes.Buffer
	c.Dir, c.Stdout, c.Stderr = ws, &out, &out
	require.NoError(t, c.Start())
	_ = c.Wait()
	assert.Contains(t, out.String(), "in\n")
	_, err = os.Stat(filepath.Join(outside, "outside"))
	assert.True(t, os.IsNotExist(err), out.String())
	assert.Contains(t, c.Report().String(), "create "+filepath.Join(outside, "outside")+": outside the writable directories")
}
