//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A spare helper started ahead of time runs each command with that
// command's directory, environment, stdio and session, holds nothing of
// the host's environment itself, and exits when the host's end of its
// socket closes.
func TestSpareHelperRunsTheJobItIsGiven(t *testing.T) {
	requireSandbox(t)
	helper, err := os.Executable()
	require.NoError(t, err)
	ws, tmp := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	t.Setenv("FIDO_TEST_HOST_SECRET", "host-only")
	p := Policy{Workspace: ws, TempDir: tmp}
	key := spareKey{helper: helper}
	refill(key)
	waitForSpare(t, key)
	spares.Lock()
	spare := spares.ready[key]
	spares.Unlock()
	env, err := os.ReadFile("/proc/" + strconv.Itoa(spare.cmd.Process.Pid) + "/environ")
	require.NoError(t, err)
	assert.NotContains(t, string(env), "host-only", "a waiting spare holds none of the host's environment")

	for i, dir := range []string{ws, filepath.Join(ws, "sub")} {
		waitForSpare(t, key)
		c, err := Command(context.Background(), p, "bash", "-c", `echo "$VAR $(pwd) $(cut -d' ' -f6 /proc/$$/stat) $$"; echo err >&2; cat`)
		require.NoError(t, err)
		var out, errOut bytes.Buffer
		c.Dir, c.Stdout, c.Stderr = dir, &out, &errOut
		c.Stdin = strings.NewReader("from stdin\n")
		c.Env = append(p.Env(os.Environ()), "VAR=job"+strconv.Itoa(i))
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		require.NoError(t, c.Start())
		pid := c.Process.Pid
		require.NoError(t, c.Wait())
		// Its own session (Setsid), led by the command itself.
		want := "job" + strconv.Itoa(i) + " " + dir + " " + strconv.Itoa(pid) + " " + strconv.Itoa(pid)
		assert.Equal(t, want+"\nfrom stdin\n", out.String())
		assert.Equal(t, "err\n", errOut.String())
	}

	// The host's end closes: the spare reads the end of its socket and exits.
	waitForSpare(t, key)
	spares.Lock()
	s := spares.ready[key]
	delete(spares.ready, key)
	spares.Unlock()
	s.host.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the spare did not exit when its socket closed")
	}
}

// A command that wants namespaces of its own (Cloneflags) gets a helper
// started for it; the cached rules follow a directory that changed.
func TestCompiledRulesFollowTheFilesystem(t *testing.T) {
	requireSandbox(t)
	home, ws, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	p := Policy{Workspace: ws, TempDir: tmp, Deny: DefaultDeny(home, "", "", false)}
	run := func(script string) string {
		c, err := Command(context.Background(), p, "bash", "-c", script)
		require.NoError(t, err)
		var out bytes.Buffer
		c.Stdout, c.Stderr, c.Dir = &out, &out, ws
		_ = c.Run()
		return out.String()
	}
	// Let the directories settle so the compiled rules are kept.
	time.Sleep(2 * cacheSettle)
	assert.Contains(t, run(`ls "`+home+`" >/dev/null && echo listed`), "listed")
	// A protected path appears after the rules were compiled: hidden at once.
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("SECRET"), 0o600))
	out := run(`cat "` + home + `/.ssh/id_ed25519" || echo refused`)
	assert.NotContains(t, out, "SECRET")
	assert.Contains(t, out, "refused")
	// A new file beside a hidden one is readable at once.
	require.NoError(t, os.WriteFile(filepath.Join(home, "notes.txt"), []byte("NOTES"), 0o644))
	assert.Contains(t, run(`cat "`+home+`/notes.txt"`), "NOTES")
	if os.Getuid() == 0 {
		c, err := Command(context.Background(), p, "bash", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1")
		require.NoError(t, err)
		var b bytes.Buffer
		c.Stdout, c.Stderr = &b, &b
		c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		require.NoError(t, c.Run())
		assert.Equal(t, "lo", strings.TrimSpace(b.String()), "its own network namespace")
	}
}
