package files

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/git-pkgs/gitignore"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// ignoreNode is one compiled .gitignore in an immutable chain from a
// directory up to the workspace root. The deepest file whose patterns match
// a path decides (and within a file the last matching line), which is git's
// precedence. Nodes are shared by every path below their directory, so each
// .gitignore is compiled once per walk.
type ignoreNode struct {
	parent *ignoreNode
	dir    string // workspace-relative slash path of the directory holding the file; "" for the root
	m      *gitignore.Matcher
}

// newIgnoreNode compiles data as the ignore file of dir (workspace-relative).
func newIgnoreNode(parent *ignoreNode, dir string, data []byte) *ignoreNode {
	// New("") never spawns git to look for global excludes; AddPatterns scopes nothing
	// because every node matches paths relative to its own directory.
	m := gitignore.New("")
	m.AddPatterns(fixTrailingDoubleStar(data), "")
	if dir == "." {
		dir = ""
	}
	return &ignoreNode{parent: parent, dir: dir, m: m}
}

// fixTrailingDoubleStar rewrites `X/**` lines to `X/*`. git reads `X/**` as
// "everything inside X" but not X itself, so `!X/keep` can re-include a file;
// the library treats it as matching X, which would prune X entirely. For a
// pruning walker `X/*` is equivalent to git's meaning.
func fixTrailingDoubleStar(data []byte) []byte {
	if !bytes.Contains(data, []byte("/**")) {
		return data
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		t := bytes.TrimRight(l, " \r")
		if len(t) > 3 && bytes.HasSuffix(t, []byte("/**")) && !bytes.HasSuffix(t, []byte(`\/**`)) {
			lines[i] = append(append([]byte{}, t[:len(t)-1]...), l[len(t):]...)
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

// ignored reports whether the workspace-relative path rel is ignored.
func (n *ignoreNode) ignored(rel string, isDir bool) bool {
	for x := n; x != nil; x = x.parent {
		sub := rel
		if x.dir != "" {
			if !strings.HasPrefix(rel, x.dir+"/") {
				continue
			}
			sub = rel[len(x.dir)+1:]
		}
		if isDir {
			sub += "/"
		}
		if r := x.m.MatchDetail(sub); r.Matched {
			return r.Ignored
		}
	}
	return false
}

// maxIgnoreFile bounds the size of one ignore file Fido reads.
const maxIgnoreFile = 4 << 20

// readIgnoreFile reads the ignore file name (workspace-relative) the way
// Fido reads every file it reads on its own (confined.ReadFile: a regular
// file inside the workspace, opened without blocking, size-capped). A
// missing file is silently absent; any other failure (a FIFO, a symlink to
// /dev/zero, a huge file) skips the file with one log line.
func readIgnoreFile(sb *workspace.Sandbox, name string) ([]byte, bool) {
	data, err := sb.ReadOwnFile(name, maxIgnoreFile)
	return data, err == nil
}

// readIgnoreChild reads the .gitignore (of type typ in the listing) of the
// directory dirRel that the walker holds open as dir, relative to dir's
// descriptor. A symlink is read like the start directory's chain reads it
// (followed, inside the workspace only).
func readIgnoreChild(sb *workspace.Sandbox, dir *os.File, dirRel string, typ fs.FileMode) ([]byte, bool) {
	name := path.Join(dirRel, ".gitignore")
	if typ&fs.ModeSymlink != 0 {
		return readIgnoreFile(sb, name)
	}
	f, fi, err := confined.OpenChild(dir, ".gitignore")
	if err != nil {
		return ignoreData(sb, name, nil, err)
	}
	defer f.Close()
	var data []byte
	switch {
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%w (it is %s)", confined.ErrNotRegular, confined.TypeName(fi.Mode()))
	case fi.Size() > maxIgnoreFile:
		err = fmt.Errorf("%w: %d bytes, at most %d are read", confined.ErrTooLarge, fi.Size(), maxIgnoreFile)
	default:
		data, err = io.ReadAll(io.LimitReader(f, maxIgnoreFile+1))
		if err == nil && len(data) > maxIgnoreFile {
			err = fmt.Errorf("%w: more than %d bytes", confined.ErrTooLarge, maxIgnoreFile)
		}
	}
	return ignoreData(sb, name, data, err)
}

func ignoreData(sb *workspace.Sandbox, name string, data []byte, err error) ([]byte, bool) {
	if err == nil {
		return data, true
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		sb.LogSkip(name, err)
	}
	return nil, false
}

// rootIgnore builds the chain for the workspace root: .git/info/exclude
// (lowest precedence), then the root .gitignore.
func rootIgnore(sb *workspace.Sandbox) *ignoreNode {
	var n *ignoreNode
	if data, ok := readIgnoreFile(sb, ".git/info/exclude"); ok {
		n = newIgnoreNode(nil, "", data)
	}
	if data, ok := readIgnoreFile(sb, ".gitignore"); ok {
		n = newIgnoreNode(n, "", data)
	}
	return n
}

// ignoreChainFor builds the chain that applies inside the directory relDir
// (workspace-relative, slash-separated) and reports whether relDir or one of
// its ancestors is itself ignored. git cannot re-include anything below an
// ignored directory, so every ancestor must be checked, not just the leaf.
func ignoreChainFor(sb *workspace.Sandbox, relDir string) (*ignoreNode, bool) {
	n := rootIgnore(sb)
	if relDir == "." || relDir == "" {
		return n, false
	}
	parts := strings.Split(relDir, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		if n.ignored(sub, true) {
			return n, true
		}
		if data, ok := readIgnoreFile(sb, sub+"/.gitignore"); ok {
			n = newIgnoreNode(n, sub, data)
		}
	}
	return n, false
}
