//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// box is a fake user for the escape suite: a HOME with keys, credentials,
// shell start-up files and Fido's state, a workspace, a temp dir and a
// tree outside the workspace that nothing may change.
type box struct {
	home, state, ws, tmp, outside string
	policy                        Policy
	env                           []string
}

func newBox(t *testing.T) *box {
	t.Helper()
	requireSandbox(t)
	b := &box{home: t.TempDir(), ws: t.TempDir(), tmp: t.TempDir(), outside: t.TempDir()}
	b.state = filepath.Join(b.home, ".local", "state", "fido")
	for path, body := range map[string]string{
		".ssh/id_ed25519":   "SECRET-SSH-KEY",
		".ssh/config":       "Host *",
		".aws/credentials":  "SECRET-AWS",
		".bashrc":           "echo hi",
		".netrc":            "machine x password SECRET-NETRC",
		".local/state/fido": "",
		".gitconfig":        "[user]\n\tname = T\n\temail = t@example.com\n",
	} {
		p := filepath.Join(b.home, path)
		if body == "" {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(b.state, "plan.json"), []byte("SECRET-STATE"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(b.outside, "file"), []byte("outside"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(b.ws, "sub"), 0o755))
	b.policy = Policy{Workspace: b.ws, TempDir: b.tmp, Deny: DefaultDeny(b.home, b.state, "", os.Getuid() == 0)}
	b.env = append(b.policy.Env(os.Environ()), "HOME="+b.home, "OUT="+b.outside, "STATE="+b.state, "WS="+b.ws)
	return b
}

func requireSandbox(t testing.TB) {
	t.Helper()
	if s := Probe(); !s.Enforced {
		t.Skip("no sandbox on this system: " + s.Reason)
	}
}

type result struct {
	out    string
	exit   int
	report Report
}

// run runs script with bash in the sandbox under p, in the workspace.
func (b *box) run(t *testing.T, p Policy, script string, tweak ...func(*Cmd)) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Command(ctx, p, "bash", "-c", script)
	require.NoError(t, err)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.Dir = b.ws
	c.Env = b.env
	for _, f := range tweak {
		f(c)
	}
	require.NoError(t, c.Start())
	err = c.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	r := result{out: out.String(), exit: code, report: c.Report()}
	t.Logf("$ %s\n%s(exit %d)\n%s", script, r.out, r.exit, r.report)
	return r
}

// denied finds the denial of op on path (or address).
func (r result) denied(op, what string) (Denial, bool) {
	for _, d := range r.report.Denials {
		if d.Op == op && (d.Path == what || d.Addr == what) {
			return d, true
		}
	}
	return Denial{}, false
}

// treeHash hashes every name, mode and content under the roots.
func treeHash(t *testing.T, roots ...string) string {
	t.Helper()
	h := sha256.New()
	for _, root := range roots {
		var paths []string
		require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			paths = append(paths, p)
			return nil
		}))
		sort.Strings(paths)
		for _, p := range paths {
			st, err := os.Lstat(p)
			require.NoError(t, err)
			fmt.Fprintf(h, "%s %v %d\n", p, st.Mode(), st.Size())
			if st.Mode().IsRegular() {
				body, err := os.ReadFile(p)
				require.NoError(t, err)
				h.Write(body)
			}
			if st.Mode()&os.ModeSymlink != 0 {
				l, _ := os.Readlink(p)
				h.Write([]byte(l))
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
