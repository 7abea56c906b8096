//go:build linux && (amd64 || arm64)

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compile grants around hidden paths: the home directory itself is not
// granted (it holds .ssh), its other entries are, .ssh is not, and the
// workspace's .git is left out of the writable grants unless it can be
// mounted read-only.
func TestCompileGrantsAroundHiddenPaths(t *testing.T) {
	home, ws, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{".ssh", "src", ".config/gh", ".config/nvim"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "pkg"), 0o755))
	p := Policy{Workspace: ws, TempDir: tmp, Deny: DefaultDeny(home, "", "", false)}

	rs, err := compile(p, 7, false)
	require.NoError(t, err)
	read := func(path string) bool { return rs.allows(path, llReadFile) }
	write := func(path string) bool { return rs.allows(path, llWriteFile) }
	makeIn := func(dir string) bool { return rs.allows(dir, llMakeReg) }

	assert.True(t, read(filepath.Join(home, ".gitconfig")))
	assert.True(t, read(filepath.Join(home, "src", "x.go")))
	assert.True(t, read(filepath.Join(home, ".config", "nvim", "init.lua")))
	assert.False(t, read(filepath.Join(home, ".ssh", "id_ed25519")))
	assert.False(t, read(filepath.Join(home, ".bashrc")))
	assert.False(t, read(filepath.Join(home, ".config", "gh", "hosts.yml")))
	assert.False(t, rs.allows(home, llReadDir), "a directory holding hidden paths is not listable")
	assert.True(t, read("/usr/bin/env"))
	assert.True(t, write("/dev/null"))
	assert.False(t, read("/dev/mem"), "no device but the harmless ones")
	assert.False(t, write("/usr/bin/env"))

	assert.True(t, write(filepath.Join(ws, "pkg", "a.go")))
	assert.True(t, makeIn(filepath.Join(ws, "pkg")))
	assert.False(t, write(filepath.Join(ws, ".git", "config")))
	assert.False(t, makeIn(ws), "without a mount namespace the top level cannot take new entries")
	assert.Contains(t, rs.why(filepath.Join(ws, "new"), llMakeReg), "top level is read-only")
	assert.True(t, makeIn(tmp))

	rs, err = compile(p, 7, true)
	require.NoError(t, err)
	assert.True(t, rs.allows(ws, llMakeReg), "with the read-only mount the whole workspace is granted")
	assert.Equal(t, []string{filepath.Join(ws, ".git")}, rs.ROMounts)
	assert.False(t, rs.allows(filepath.Join(ws, ".git", "config"), llWriteFile), "the mount refuses .git writes")

	p.GitWritable = true
	rs, err = compile(p, 7, false)
	require.NoError(t, err)
	assert.True(t, rs.allows(filepath.Join(ws, ".git", "config"), llWriteFile))

	p.ReadOnly = true
	rs, err = compile(p, 7, false)
	require.NoError(t, err)
	assert.False(t, rs.allows(filepath.Join(ws, "pkg", "a.go"), llWriteFile))
	assert.True(t, rs.allows(filepath.Join(ws, "pkg", "a.go"), llReadFile))
	assert.True(t, rs.allows(filepath.Join(tmp, "x"), llWriteFile))

	// An older kernel handles fewer rights, and no rule holds more.
	rs, err = compile(Policy{Workspace: ws, TempDir: tmp}, 1, false)
	require.NoError(t, err)
	for _, r := range rs.Rules {
		assert.Zero(t, r.Access&^handledFS(1), r.Path)
	}
}

// The filter assembles, and its jumps all land inside it.
func TestFilterAssembles(t *testing.T) {
	for _, s := range []filterSpec{{}, {Network: true}, {TCPSockets: true, Notify: true}, {Notify: true}} {
		ins, err := buildFilter(s)
		require.NoError(t, err)
		for i, in := range ins {
			if in.Code&0x07 == 0x05 { // BPF_JMP
				assert.Less(t, i+1+int(in.Jt), len(ins))
				assert.Less(t, i+1+int(in.Jf), len(ins))
			}
		}
		assert.Equal(t, uint16(0x06), ins[len(ins)-1].Code, "ends with a return")
	}
}

// A Unix socket the policy names is reachable even inside a hidden
// directory (an ssh-agent in the runtime dir); its neighbours are not.
func TestNamedSocketInsideAHiddenDirectory(t *testing.T) {
	run, ws, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	agent := filepath.Join(run, "ssh-agent.sock")
	require.NoError(t, os.WriteFile(agent, nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(run, "bus"), nil, 0o600))
	p := Policy{Workspace: ws, TempDir: tmp, Deny: []string{run}, UnixSockets: []string{agent}}
	rs, err := compile(p, 7, false)
	require.NoError(t, err)
	ok, _ := rs.socketAllowed(agent)
	assert.True(t, ok)
	ok, why := rs.socketAllowed(filepath.Join(run, "bus"))
	assert.False(t, ok)
	assert.Contains(t, why, "hidden in the sandbox")
}
