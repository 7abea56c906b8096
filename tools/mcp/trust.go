package mcp

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// The trust of a project's servers is bound to each entry the user saw.
// mcp-trust.json (in the workspace's state directory, never in the
// workspace) holds, per trusted server, salted hashes of every part of its
// entry: the command, args and cwd as they run, the type and url, each env
// and header value as written, and the size and modification time of each
// workspace file the entry names (a script the model could rewrite). An
// entry that differs in any part is asked about again, saying what changed;
// entries still as trusted start without a question. Values are hashed, not
// stored, so a token written into .mcp.json never lands in the state file;
// the salt keeps a short secret from being guessed from its hash.

const trustVersion = 2

// maxTrustFile bounds the trust file read.
const maxTrustFile = 1 << 20

type trustDecision string

const trustNever trustDecision = "never"

// entryPrint is one trusted entry as hashes of its parts.
type entryPrint struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    string            `json:"args"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Files: workspace-relative path → hash of its size and modification time.
	Files map[string]string `json:"files,omitempty"`
	// Sandbox is the hash of the entry's "sandbox" as written ("" when not
	// written, as in records made before it existed).
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxDefault: trusted by a Fido that sandboxes servers whose entry
	// does not say; records made before have it false, and their servers
	// keep running as they were trusted.
	SandboxDefault bool `json:"sandbox_default,omitempty"`
}

type trustFileJSON struct {
	Version int                   `json:"version"`
	Salt    string                `json:"salt,omitempty"`
	Never   bool                  `json:"never,omitempty"`
	Servers map[string]entryPrint `json:"servers,omitempty"`
	// Project is version 1's one answer for the whole file.
	Project trustDecision `json:"project,omitempty"`
}

// trustState is what the trust file says.
type trustState struct {
	never bool
	// legacy: version 1 said "trusted" without recording the entries; every
	// server is asked about again.
	legacy  bool
	salt    []byte
	servers map[string]entryPrint
}

// trustStore reads and writes the workspace's trust file.
type trustStore struct {
	mu   sync.Mutex
	dir  string
	root string // the workspace root: entries' files are looked up below it
}

func (t *trustStore) path() string { return filepath.Join(t.dir, trustFile) }

// load reads the trust file; a missing or broken one trusts nothing.
func (t *trustStore) load() trustState {
	st := trustState{servers: map[string]entryPrint{}}
	if t.dir == "" {
		return st
	}
	b, err := confined.ReadPath(t.path(), maxTrustFile)
	if err != nil {
		return st
	}
	var f trustFileJSON
	if json.Unmarshal(b, &f) != nil {
		return st
	}
	switch {
	case f.Version < trustVersion && f.Project == trustNever:
		st.never = true
	case f.Version < trustVersion && f.Project != "":
		st.legacy = true
	case f.Version == trustVersion:
		st.never = f.Never
		if salt, err := hex.DecodeString(f.Salt); err == nil && len(salt) >= 16 {
			st.salt = salt
			for k, v := range f.Servers {
				st.servers[k] = v
			}
		}
	}
	return st
}

// saltOf returns the file's salt, or a fresh one for a file still to be written.
func (st *trustState) saltOf() []byte {
	if len(st.salt) == 0 {
		st.salt = make([]byte, 16)
		_, _ = rand.Read(st.salt)
	}
	return st.salt
}

// update changes the trust file under its lock (another Fido may write it too).
func (t *trustStore) update(fn func(st *trustState)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == "" {
		return errors.New("no state directory")
	}
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return err
	}
	return workspace.WithStateLock(t.path(), func() error {
		st := t.load()
		fn(&st)
		f := trustFileJSON{Version: trustVersion, Never: st.never}
		if !st.never {
			f.Salt, f.Servers = hex.EncodeToString(st.saltOf()), st.servers
		}
		b, _ := json.MarshalIndent(f, "", "  ")
		return workspace.WriteFileAtomic(t.path(), append(b, '\n'), 0o600)
	})
}

// trust records the entries as the user saw them (keeping other trusted
// servers still in the configuration).
func (t *trustStore) trust(list []ServerConfig, keep map[string]bool) error {
	return t.update(func(st *trustState) {
		st.never, st.legacy = false, false
		salt := st.saltOf()
		for name := range st.servers {
			if !keep[name] {
				delete(st.servers, name)
			}
		}
		for _, c := range list {
			st.servers[c.Name] = printOf(salt, c, t.root)
		}
	})
}

// setNever answers "never for this workspace".
func (t *trustStore) setNever() error {
	return t.update(func(st *trustState) { st.never, st.servers = true, map[string]entryPrint{} })
}

// reset forgets every answer.
func (t *trustStore) reset() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dir == "" {
		return errors.New("no state directory")
	}
	if err := os.Remove(t.path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// trustCheck is the verdict on one project server.
type trustCheck struct {
	trusted bool
	// why it is asked about: "new", the parts that changed, or the old answer.
	why string
}

// check compares each entry with what was trusted.
func (st trustState) check(c ServerConfig, root string) trustCheck {
	if st.legacy {
		return trustCheck{why: "trusted by an earlier Fido that did not record which command it trusted"}
	}
	old, ok := st.servers[c.Name]
	if !ok || len(st.salt) == 0 {
		return trustCheck{why: "new"}
	}
	changed := diffPrints(old, printOf(st.salt, c, root))
	if len(changed) == 0 {
		return trustCheck{trusted: true}
	}
	return trustCheck{why: "changed since you trusted it: " + strings.Join(changed, ", ")}
}

func hashPart(salt []byte, kind, value string) string {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(value))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// printOf hashes every part of an entry. The command, args and cwd are
// taken as they run (after ${VAR} expansion); env and header values as
// written, so a token the user's environment supplies can change without a
// question, while a value written into the file cannot.
func printOf(salt []byte, c ServerConfig, root string) entryPrint {
	args, _ := json.Marshal(c.Args)
	p := entryPrint{
		Type:    hashPart(salt, "type", c.Type),
		Command: hashPart(salt, "command", c.Command),
		Args:    hashPart(salt, "args", string(args)),
		Cwd:     hashPart(salt, "cwd", c.Cwd),
		URL:     hashPart(salt, "url", c.URL),
		// Every trust decision from now on sandboxes by default.
		SandboxDefault: true,
	}
	if c.RawSandbox != "" {
		p.Sandbox = hashPart(salt, "sandbox", c.RawSandbox)
	}
	if env := rawEnv(c); len(env) > 0 {
		p.Env = map[string]string{}
		for k, v := range env {
			p.Env[k] = hashPart(salt, "env "+k, v)
		}
	}
	if hs := rawHeaders(c); len(hs) > 0 {
		p.Headers = map[string]string{}
		for k, v := range hs {
			p.Headers[k] = hashPart(salt, "header "+k, v)
		}
	}
	for rel, id := range entryFiles(c, root) {
		if p.Files == nil {
			p.Files = map[string]string{}
		}
		p.Files[rel] = hashPart(salt, "file "+rel, id)
	}
	return p
}

// rawEnv and rawHeaders are the values as written (a config built in code
// has only the expanded ones).
func rawEnv(c ServerConfig) map[string]string {
	if c.RawEnv != nil {
		return c.RawEnv
	}
	return c.Env
}

func rawHeaders(c ServerConfig) map[string]string {
	if c.RawHeaders != nil {
		return c.RawHeaders
	}
	return c.Headers
}

// maxEntryFiles bounds the files of one entry that are looked at.
const maxEntryFiles = 32

// entryFiles finds the workspace files an entry runs: its command and every
// argument that names a regular file inside the workspace (a script, a
// config). Each is identified by its size and modification time from stat
// alone: nothing is opened or read, so a FIFO or a huge file costs nothing.
func entryFiles(c ServerConfig, root string) map[string]string {
	if root == "" || !c.Stdio() {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil
	}
	dir := realRoot
	if c.Cwd != "" {
		dir = c.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(realRoot, dir)
		}
	}
	out := map[string]string{}
	names := append([]string{c.Command}, c.Args...)
	for i, n := range names {
		if len(out) >= maxEntryFiles {
			break
		}
		if n == "" || strings.HasPrefix(n, "-") || strings.ContainsRune(n, 0) || len(n) > 4096 {
			continue
		}
		if i == 0 && !strings.ContainsRune(n, '/') {
			continue // a program looked up on PATH
		}
		p := n
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(realRoot, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%d:%d:%o", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	}
	return out
}

// diffPrints names the parts of an entry that differ.
func diffPrints(old, cur entryPrint) []string {
	var out []string
	for _, f := range []struct{ name, a, b string }{
		{"type", old.Type, cur.Type}, {"command", old.Command, cur.Command}, {"args", old.Args, cur.Args},
		{"cwd", old.Cwd, cur.Cwd}, {"url", old.URL, cur.URL}, {"sandbox", old.Sandbox, cur.Sandbox},
	} {
		if f.a != f.b {
			out = append(out, f.name)
		}
	}
	out = append(out, diffMap("env", old.Env, cur.Env)...)
	out = append(out, diffMap("header", old.Headers, cur.Headers)...)
	out = append(out, diffMap("file", old.Files, cur.Files)...)
	return out
}

func diffMap(kind string, old, cur map[string]string) []string {
	var out []string
	for k, v := range cur {
		switch ov, ok := old[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s %s added", kind, k))
		case ov != v:
			out = append(out, fmt.Sprintf("%s %s", kind, k))
		}
	}
	for k := range old {
		if _, ok := cur[k]; !ok {
			out = append(out, fmt.Sprintf("%s %s removed", kind, k))
		}
	}
	sort.Strings(out)
	return out
}

// secretName: an env or header name whose value is likely a secret.
var secretName = regexp.MustCompile(`(?i)key|token|secret|pass|pwd|auth|cred|cookie|session|private|signature|bearer`)

// onlyRefs: a value made only of ${VAR} references (it names variables,
// holds no secret itself).
var onlyRefs = regexp.MustCompile(`^(\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}\s*)+$`)

// shownValue is how an env or header value appears in the trust question:
// as written when it only names variables or cannot be a secret, else
// hidden (its length only). Values never reach the log.
func shownValue(name, v string) string {
	if onlyRefs.MatchString(v) && !strings.Contains(v, ":-") {
		return v
	}
	if secretName.MatchString(name) || looksSecret(v) {
		return fmt.Sprintf("‹hidden, %d characters›", len([]rune(v)))
	}
	return shortValue(v)
}

// looksSecret: a long run of letters, digits and token punctuation without
// spaces or path separators, as API keys are.
func looksSecret(v string) bool {
	if len(v) < 20 || strings.ContainsAny(v, " /\\") {
		return false
	}
	classes := 0
	for _, set := range []string{"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"} {
		if strings.ContainsAny(v, set) {
			classes++
		}
	}
	return classes >= 2
}

func shortValue(v string) string {
	if r := []rune(v); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return v
}

// shellQuote writes a word so that the user reads exactly one argument.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// describeEntry is the trust question's text for one server: everything
// that decides what runs, secrets hidden.
func describeEntry(c ServerConfig, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", c.Name, why)
	if c.Stdio() {
		words := []string{shellQuote(c.Command)}
		for _, a := range c.Args {
			words = append(words, shellQuote(a))
		}
		fmt.Fprintf(&b, "  runs: %s\n", shortRun(strings.Join(words, " ")))
		cwd := "the workspace root"
		if c.Cwd != "" {
			cwd = c.Cwd
		}
		fmt.Fprintf(&b, "  in:   %s\n", cwd)
		fmt.Fprintf(&b, "  sandbox: %s\n", sandboxLine(c.Sandbox))
	} else {
		fmt.Fprintf(&b, "  url:  %s\n", shortValue(c.URL))
	}
	writeVars(&b, "env: ", rawEnv(c))
	writeVars(&b, "headers:", rawHeaders(c))
	return strings.TrimRight(b.String(), "\n")
}

// sandboxLine says how a project server asked about will run.
func sandboxLine(spec *SandboxSpec) string {
	switch {
	case spec == nil:
		return `yes (the default): writes only in the workspace and its temp dir, no network, your keys hidden ("sandbox": false runs it with your full authority)`
	case !spec.Enabled:
		return `NO ("sandbox": false): it runs with your full authority`
	case spec.Network:
		return "yes, with the network: writes only in the workspace and its temp dir, your keys hidden"
	}
	return "yes: writes only in the workspace and its temp dir, no network, your keys hidden"
}

// shortRun bounds a command line in the question (a hostile one can be huge).
func shortRun(s string) string {
	if r := []rune(s); len(r) > 2000 {
		return string(r[:1999]) + fmt.Sprintf("… (%d characters in all)", len(r))
	}
	return s
}

func writeVars(b *strings.Builder, label string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 {
			fmt.Fprintf(b, "  %s %s=%s\n", label, k, shownValue(k, m[k]))
			continue
		}
		fmt.Fprintf(b, "  %s %s=%s\n", strings.Repeat(" ", len([]rune(label))), k, shownValue(k, m[k]))
	}
}
