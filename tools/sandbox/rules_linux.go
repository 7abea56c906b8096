//go:build linux && (amd64 || arm64)

package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Landlock filesystem rights (include/uapi/linux/landlock.h).
const (
	llExecute   = unix.LANDLOCK_ACCESS_FS_EXECUTE
	llWriteFile = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	llReadFile  = unix.LANDLOCK_ACCESS_FS_READ_FILE
	llReadDir   = unix.LANDLOCK_ACCESS_FS_READ_DIR
	llRemoveDir = unix.LANDLOCK_ACCESS_FS_REMOVE_DIR
	llRemove    = unix.LANDLOCK_ACCESS_FS_REMOVE_FILE
	llMakeChar  = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR
	llMakeDir   = unix.LANDLOCK_ACCESS_FS_MAKE_DIR
	llMakeReg   = unix.LANDLOCK_ACCESS_FS_MAKE_REG
	llMakeSock  = unix.LANDLOCK_ACCESS_FS_MAKE_SOCK
	llMakeFifo  = unix.LANDLOCK_ACCESS_FS_MAKE_FIFO
	llMakeBlock = unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
	llMakeSym   = unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	llRefer     = unix.LANDLOCK_ACCESS_FS_REFER
	llTruncate  = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	llIoctlDev  = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// llFileRights are the rights a rule on a file (not a directory) may hold.
	llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev
	llReadRights = llExecute | llReadFile | llReadDir
)

// handledFS is every filesystem right Landlock ABI abi can restrict: the
// sandbox handles all of them, so whatever no rule grants is refused.
func handledFS(abi int) uint64 {
	switch {
	case abi <= 0:
		return 0
	case abi == 1:
		return (1 << 13) - 1
	case abi == 2:
		return (1 << 14) - 1
	case abi <= 4:
		return (1 << 15) - 1
	default:
		return (1 << 16) - 1
	}
}

// devFiles are the only device files a sandboxed command may open: not the
// terminals (keystrokes), not the disks (whose raw blocks hold every file).
// /dev/tty is the controlling terminal, which a command started in its own
// session (as bash_exec starts them) does not have.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// fsRule is one Landlock path-beneath rule: Access is granted on Path and,
// for a directory, on everything beneath it.
type fsRule struct {
	Path   string `json:"p"`
	Access uint64 `json:"a"`
	Dir    bool   `json:"d,omitempty"`
}

// ruleSet is a policy compiled for one kernel: the Landlock rules the
// helper installs and what the supervisor needs to say why an operation
// was refused. Both sides read the same value, so the explanation follows
// the enforcement.
type ruleSet struct {
	Rules   []fsRule `json:"rules"`
	Handled uint64   `json:"handled"`
	// ROMounts are bind-mounted read-only in the helper's mount namespace
	// (the workspace's .git when the namespace is available).
	ROMounts []string `json:"ro_mounts,omitempty"`

	// watch are the directories whose entries the rules were computed
	// from (listed around hidden paths, or the nearest existing parent of
	// a path that was missing): the rules stay valid while none changed.
	watch []dirStamp

	deny []string // hidden paths, resolved
	git  string   // the workspace's protected .git, resolved ("" if writable)
	// gitAbsent: the workspace had no .git and QuarantineNewGit left the
	// top level writable; a .git found after the command is moved aside.
	gitAbsent bool
	writable  []string // writable roots, resolved
	sockets   []string // Unix sockets allowed outside the writable roots
	access    map[string]uint64
	policy    Policy
}

// resolve returns path with every symbolic link resolved, or ok false if
// it does not exist.
func resolve(path string) (string, bool) {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	return r, true
}

// resolveWatched is resolve, and for a missing path it watches the
// nearest existing parent: the rules change when the path appears.
func (rs *ruleSet) resolveWatched(path string) (string, bool) {
	if r, ok := resolve(path); ok {
		return r, true
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if r, ok := resolve(dir); ok {
			rs.watchDir(r)
			// Stamped first, then looked at again: what appeared in
			// between is seen now or changes the stamp later.
			return resolve(path)
		}
		if dir == "/" || dir == "." {
			return "", false
		}
	}
}

// dirStamp identifies a directory's state: its entries change its mtime.
type dirStamp struct {
	path         string
	dev, ino     uint64
	mtime, ctime int64
}

func stampOf(path string) dirStamp {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return dirStamp{path: path}
	}
	return dirStamp{path: path, dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// watchDir stamps dir before it is read.
func (rs *ruleSet) watchDir(dir string) { rs.watch = append(rs.watch, stampOf(dir)) }

// current reports whether no watched directory changed since compile.
func (rs *ruleSet) current() bool {
	for _, w := range rs.watch {
		if stampOf(w.path) != w {
			return false
		}
	}
	return true
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

func withinAny(path string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if within(path, d) {
			return d, true
		}
	}
	return "", false
}

// containsAny reports whether one of paths is dir or beneath it.
func containsAny(dir string, paths []string) bool {
	for _, p := range paths {
		if within(p, dir) {
			return true
		}
	}
	return false
}

// compile turns p into Landlock rules for ABI abi. Landlock only grants,
// so "readable everywhere except the hidden paths" is written as the
// largest subtrees that contain no hidden path: a directory holding one is
// not granted itself (it can be walked through but not listed, and entries
// created in it later are not readable); its other entries are granted one
// by one, recursively. Writable roots are granted the same way around the
// protected .git, unless mountNS lets the helper bind .git read-only, in
// which case the whole workspace is granted and the mount refuses writes.
func compile(p Policy, abi int, mountNS bool) (*ruleSet, error) {
	p, err := p.validate()
	if err != nil {
		return nil, err
	}
	rs := &ruleSet{Handled: handledFS(abi), policy: p}
	for _, d := range p.Deny {
		if r, ok := rs.resolveWatched(d); ok {
			rs.deny = append(rs.deny, r)
		}
	}
	var roots []string
	if !p.ReadOnly {
		roots = append(roots, p.Workspace)
	}
	roots = append(roots, p.TempDir)
	roots = append(roots, p.Writable...)
	for _, w := range roots {
		if r, ok := rs.resolveWatched(w); ok {
			if _, hidden := withinAny(r, rs.deny); !hidden {
				rs.writable = append(rs.writable, r)
			}
		}
	}
	for _, s := range p.UnixSockets {
		if r, ok := rs.resolveWatched(s); ok {
			rs.sockets = append(rs.sockets, r)
		}
	}
	if !p.ReadOnly && !p.GitWritable && p.Workspace != "" {
		// A missing .git is protected too: one created by the command
		// (core.fsmonitor in its config) would run at the next git status.
		if ws, ok := resolve(p.Workspace); ok {
			rs.git = filepath.Join(ws, ".git")
			rs.watchDir(ws) // where .git appears
		}
	}
	rs.readTree("/")
	excluded := rs.deny
	if rs.git != "" {
		_, err := os.Lstat(rs.git)
		switch {
		case err == nil && mountNS:
			rs.ROMounts = []string{rs.git}
		case err != nil && p.QuarantineNewGit:
			rs.gitAbsent = true
		default:
			excluded = append(append([]string(nil), rs.deny...), rs.git)
		}
	}
	for _, w := range rs.writable {
		rs.writeTree(w, excluded)
	}
	rs.index()
	return rs, nil
}

func (rs *ruleSet) add(path string, access uint64, dir bool) {
	if !dir {
		access &= llFileRights
	}
	access &= rs.Handled
	if access != 0 {
		rs.Rules = append(rs.Rules, fsRule{Path: path, Access: access, Dir: dir})
	}
}

// readTree grants reading and executing dir, or the parts of it that hold
// no hidden path.
func (rs *ruleSet) readTree(dir string) {
	if _, hidden := withinAny(dir, rs.deny); hidden {
		return
	}
	if dir == "/dev" {
		for _, f := range devFiles {
			if _, err := os.Stat(f); err == nil {
				rs.add(f, llReadFile|llWriteFile|llTruncate|llIoctlDev, false)
			}
		}
		return
	}
	if !containsAny(dir, rs.deny) && !containsAny(dir, []string{"/dev"}) {
		rs.add(dir, llReadRights, true)
		return
	}
	rs.watchDir(dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		child := filepath.Join(dir, e.Name())
		switch t := e.Type(); {
		case t&os.ModeSymlink != 0:
			// The target is granted (or not) where it lives.
		case t.IsDir():
			rs.readTree(child)
		default:
			if _, hidden := withinAny(child, rs.deny); !hidden {
				rs.add(child, llReadRights, false)
			}
		}
	}
}

// writeTree grants every right on root, or on the parts of it that hold
// no excluded path.
func (rs *ruleSet) writeTree(root string, excluded []string) {
	if _, out := withinAny(root, excluded); out {
		return
	}
	st, err := os.Lstat(root)
	if err != nil {
		return
	}
	if !containsAny(root, excluded) {
		rs.add(root, rs.Handled, st.IsDir())
		return
	}
	rs.watchDir(root)
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		child := filepath.Join(root, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		rs.writeTree(child, excluded)
	}
}

// index builds the path → rights map the supervisor's checks read.
func (rs *ruleSet) index() {
	rs.access = make(map[string]uint64, len(rs.Rules))
	for _, r := range rs.Rules {
		rs.access[r.Path] |= r.Access
	}
	sort.Strings(rs.deny)
}

// rightsAt is what Landlock grants on path: the union of the rules on it
// and on every directory above it.
func (rs *ruleSet) rightsAt(path string) uint64 {
	var a uint64
	for p := path; ; p = filepath.Dir(p) {
		a |= rs.access[p]
		if p == "/" || p == "." {
			return a
		}
	}
}

// allows reports whether Landlock and the read-only mounts let access
// (Landlock bits) happen on path.
func (rs *ruleSet) allows(path string, access uint64) bool {
	access &= rs.Handled
	if access&^llReadRights != 0 {
		if _, ro := withinAny(path, rs.ROMounts); ro {
			return false
		}
	}
	return rs.rightsAt(path)&access == access
}

// why names the part of the policy that refuses access on path.
func (rs *ruleSet) why(path string, access uint64) string {
	if d, hidden := withinAny(path, rs.deny); hidden {
		return "hidden in the sandbox (" + d + " is a protected path: keys, credentials, shell start-up files or Fido's state)"
	}
	writing := access&^llReadRights != 0
	if writing && rs.git != "" && within(path, rs.git) {
		return "the workspace's .git is read-only (this command's rule does not allow git writes)"
	}
	if writing && rs.git != "" && len(rs.ROMounts) == 0 && filepath.Dir(path) == filepath.Dir(rs.git) {
		return "the workspace's top level is read-only while .git is protected (Landlock cannot exempt .git, and .git can be mounted read-only only where it exists and user namespaces work); use a subdirectory or a rule allowing git writes"
	}
	if writing && rs.policy.ReadOnly {
		return "read-only sandbox (only the temp dir " + rs.policy.TempDir + " is writable)"
	}
	if writing {
		return "outside the writable directories (" + strings.Join(rs.writable, ", ") + ")"
	}
	if access&llExecute != 0 && access&llReadFile == 0 {
		return "not executable in the sandbox"
	}
	return "not readable in the sandbox (a directory holding hidden paths cannot be listed, and what was created in it after the command started cannot be read)"
}

// socketAllowed reports whether a command may connect to the Unix socket
// at path (resolved), and why not. A socket the policy names (an
// ssh-agent in the hidden runtime directory) is allowed even inside a
// hidden path: the user named it.
func (rs *ruleSet) socketAllowed(path string) (bool, string) {
	if _, ok := withinAny(path, rs.sockets); ok {
		return true, ""
	}
	if d, hidden := withinAny(path, rs.deny); hidden {
		return false, "hidden in the sandbox (" + d + " is a protected path)"
	}
	if _, ok := withinAny(path, rs.writable); ok {
		return true, ""
	}
	return false, "Unix socket outside the workspace and temp dir (it could reach a service that runs commands unsandboxed)"
}
