package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// HelperCommand is the host subcommand that applies a policy to itself and
// then runs the command (cmd/fido dispatches it to RunHelper).
const HelperCommand = "sandbox-exec"

// ErrUnavailable is returned (wrapped) by Command when this machine cannot
// enforce a sandbox. The caller must then ask the user as for an
// unsandboxed command: never run it as if it were sandboxed.
var ErrUnavailable = errors.New("the sandbox cannot be enforced on this system")

// Policy is what one sandboxed command may touch. The user's settings and
// the caller decide it; nothing the command does can widen it, and it
// reaches the helper on a private socket, never through the environment.
type Policy struct {
	// Workspace is the project root: readable, and writable unless ReadOnly.
	Workspace string
	// TempDir is the per-conversation scratch directory; always writable.
	// Required. Command sets TMPDIR to it.
	TempDir string
	// Writable lists more directories or files the command may change
	// (a build cache the user chose to share, for example).
	Writable []string
	// ReadOnly leaves only TempDir writable (subagents, plan mode).
	ReadOnly bool
	// Network allows TCP and UDP. Without it no connection leaves the
	// sandbox: not to the internet, not to a service on 127.0.0.1.
	Network bool
	// GitWritable lets the command change the workspace's .git (commits,
	// checkouts). Without it .git stays read-only, so no hook or config
	// planted there runs later outside the sandbox.
	GitWritable bool
	// QuarantineNewGit: when the workspace has no .git (and GitWritable
	// is false), its top level stays writable rather than read-only, and
	// the caller moves a .git the command created aside (Cmd.QuarantineGit)
	// once every process of the command has ended, before anything else
	// can run git there. For commands that end (bash_exec); a long-running
	// server leaves it false.
	QuarantineNewGit bool
	// Deny lists paths the command may not read, write, execute or
	// connect to at all (see DefaultDeny).
	Deny []string
	// UnixSockets lists Unix sockets outside the writable directories the
	// command may connect to (an ssh-agent, for example). Every other
	// socket outside them is refused: the Neovim server, docker.sock,
	// the D-Bus and systemd sockets would each run commands unsandboxed.
	UnixSockets []string
}

// validate checks what every platform needs and returns the policy with
// clean absolute paths.
func (p Policy) validate() (Policy, error) {
	if p.TempDir == "" {
		return p, errors.New("sandbox: the policy needs a TempDir")
	}
	if p.Workspace == "" && !p.ReadOnly {
		return p, errors.New("sandbox: the policy needs a Workspace (or ReadOnly)")
	}
	clean := func(s string) (string, error) {
		if s == "" {
			return "", nil
		}
		if !filepath.IsAbs(s) {
			return "", fmt.Errorf("sandbox: %q is not an absolute path", s)
		}
		return filepath.Clean(s), nil
	}
	var err error
	if p.Workspace, err = clean(p.Workspace); err != nil {
		return p, err
	}
	if p.TempDir, err = clean(p.TempDir); err != nil {
		return p, err
	}
	for _, list := range []*[]string{&p.Writable, &p.Deny, &p.UnixSockets} {
		out := make([]string, 0, len(*list))
		for _, s := range *list {
			c, err := clean(s)
			if err != nil {
				return p, err
			}
			out = append(out, c)
		}
		*list = out
	}
	return p, nil
}

// Env returns base with the variables a sandboxed command needs to find
// writable places: TMPDIR is the policy's TempDir, and in a read-only
// sandbox the Go build cache and npm's cache move there too (their usual
// homes are not writable, and a writable shared build cache could be
// poisoned for later builds outside the sandbox).
func (p Policy) Env(base []string) []string {
	set := map[string]string{"TMPDIR": p.TempDir}
	if p.ReadOnly {
		set["GOCACHE"] = filepath.Join(p.TempDir, "go-build")
		set["npm_config_cache"] = filepath.Join(p.TempDir, "npm-cache")
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"TMPDIR", "GOCACHE", "npm_config_cache"} {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// DefaultDeny lists what no sandboxed command may read or write: Fido's
// state directory, the user's shell start-up files and histories, SSH and
// GnuPG keys, cloud, registry and forge credentials, keyrings, browser
// profiles and the user's runtime directory (agent sockets, session bus).
// Missing paths are listed too; the compiler skips them. root adds the
// system's password hashes.
func DefaultDeny(home, stateDir, runtimeDir string, root bool) []string {
	var out []string
	if stateDir != "" {
		out = append(out, stateDir)
	}
	if runtimeDir != "" {
		out = append(out, runtimeDir)
	}
	if home != "" {
		for _, rel := range homeSecrets {
			out = append(out, filepath.Join(home, rel))
		}
	}
	if root {
		out = append(out, "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh")
	}
	return out
}

// homeSecrets are the paths under $HOME that DefaultDeny hides.
var homeSecrets = []string{
	// keys and credentials
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub",
	".netrc", ".git-credentials", ".config/git/credentials", ".docker", ".kube",
	".npmrc", ".yarnrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".gem/credentials", ".local/share/keyrings", ".password-store", ".vault-token",
	".terraform.d", ".m2/settings.xml", ".gradle/gradle.properties", ".pgpass", ".my.cnf",
	".config/op", ".mozilla", ".config/google-chrome", ".config/chromium",
	".config/fido",
	// shell start-up files and histories
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".config/fish",
	".bash_history", ".zsh_history", ".python_history", ".node_repl_history",
	".psql_history", ".mysql_history", ".sqlite_history", ".lesshst",
}

// Denial is one thing a sandboxed command tried and was refused.
type Denial struct {
	// Op is what was attempted: read, write, create, remove, rename, link,
	// exec, list, connect, bind.
	Op string
	// Path is the file, directory or Unix socket (resolved), if any.
	Path string
	// Addr is host:port for a network operation.
	Addr string
	// Rule says which part of the policy refused it.
	Rule string
	// Count is how many times the same operation was refused.
	Count int
}

func (d Denial) String() string {
	what := d.Path
	if d.Addr != "" {
		what = d.Addr
	}
	s := fmt.Sprintf("%s %s: %s", d.Op, what, d.Rule)
	if d.Count > 1 {
		s += fmt.Sprintf(" (%d times)", d.Count)
	}
	return s
}

// Report is what a finished sandboxed command was refused.
type Report struct {
	// Denials lists each refused operation once, in the order first seen.
	Denials []Denial
	// Dropped counts distinct denials past the list's limit.
	Dropped int
	// Named is false when refusals could not be observed (a sandbox
	// inside another one has no supervisor): the command may have been
	// refused things that Denials does not list.
	Named bool
}

// String renders the report for a tool result: empty when nothing was refused.
func (r Report) String() string {
	if len(r.Denials) == 0 && r.Dropped == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("sandbox: refused\n")
	for _, d := range r.Denials {
		b.WriteString("  " + d.String() + "\n")
	}
	if r.Dropped > 0 {
		fmt.Fprintf(&b, "  … and %d more\n", r.Dropped)
	}
	return b.String()
}
