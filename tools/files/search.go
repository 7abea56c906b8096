package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// DefaultMaxSearchFileSize is the size above which ripgrep skips a file (rg's --max-filesize 2M).
const DefaultMaxSearchFileSize = 2 << 20

// DefaultMaxLineLen caps the text of one matching line in results.
const DefaultMaxLineLen = 300

// SearchOptions configure a content search. The zero value searches with
// the defaults of the ripgrep tool and no result limit.
type SearchOptions struct {
	Pattern       string // RE2 syntax; matched line by line
	IgnoreCase    bool
	Glob          string // file-name filter; a leading ! excludes
	IncludeHidden bool   // search hidden files and directories (never .git)
	MaxFileSize   int64  // 0 means DefaultMaxSearchFileSize
	MaxLineLen    int    // 0 means DefaultMaxLineLen
	Limit         int    // maximum matches returned; 0 means all
	Workers       int    // 0 means GOMAXPROCS
}

// SearchMatch is one matching line.
type SearchMatch struct {
	Path string // workspace-relative, slash-separated
	Line int    // 1-based
	Text string // the line, capped at MaxLineLen bytes (on a rune boundary)
	Cut  bool   // Text was capped
}

// SearchResult is the outcome of a search; Matches are ordered by path, then line.
type SearchResult struct {
	Matches       []SearchMatch
	Files         int  // files with at least one returned match
	Searched      int  // files searched
	Truncated     bool // more matches exist than Limit
	SkippedBinary int
	SkippedLarge  int
	Unreadable    int
	FirstError    string
}

// Search runs a regular-expression search in ws below the workspace-relative
// path rel (a directory or one file). A single named file is searched even
// if hidden or ignored; binary and oversized files are always skipped.
func Search(ctx context.Context, ws *workspace.Workspace, rel string, opt SearchOptions) (*SearchResult, error) {
	m, err := compileLineMatcher(opt.Pattern, opt.IgnoreCase)
	if err != nil {
		return nil, err
	}
	gl, err := compileGlob(opt.Glob)
	if err != nil {
		return nil, err
	}
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = DefaultMaxSearchFileSize
	}
	if opt.MaxLineLen <= 0 {
		opt.MaxLineLen = DefaultMaxLineLen
	}
	abs, err := ws.Sandbox.Resolve(rel)
	if err != nil {
		return nil, err
	}
	fi, err := ws.Sandbox.Stat(abs)
	if err != nil {
		return nil, describeStatError(rel, err)
	}
	startRel := ws.Sandbox.Rel(abs)
	res := &SearchResult{}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if !fi.IsDir() {
		workers = 1
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	s := &searcher{m: m, opt: opt, workers: make([]searchWorker, workers)}
	if !fi.IsDir() {
		s.searchFile(0, startRel, func() (*os.File, fs.FileInfo, error) { return ws.Sandbox.Open(abs) })
	} else {
		wopt := walkOptions{HiddenDirs: opt.IncludeHidden, HiddenFiles: opt.IncludeHidden, Workers: workers}
		stats := walkDir(ctx, ws.Sandbox, abs, startRel, wopt, func(w int, e walkEntry) bool {
			if e.isDir() {
				return true
			}
			if !e.Type.IsRegular() || !gl.match(e.Rel) {
				return false
			}
			// The limit cancels the walk once one more match than asked for
			// exists, so the result can say truthfully that there are more.
			if s.searchFile(w, e.Rel, e.open) && opt.Limit > 0 && s.total.Load() > int64(opt.Limit) {
				cancel()
			}
			return false
		})
		res.Unreadable, res.FirstError = stats.Unreadable, stats.FirstError
	}
	// The derived ctx is cancelled on purpose at the limit; only the caller's
	// cancellation is an interruption.
	if err := parent.Err(); err != nil {
		return nil, err
	}
	var files []fileMatches
	for i := range s.workers {
		w := &s.workers[i]
		files = append(files, w.files...)
		res.Searched += w.searched
		res.SkippedBinary += w.binary
		res.SkippedLarge += w.large
		res.Unreadable += w.unreadable
		if res.FirstError == "" {
			res.FirstError = w.firstErr
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	n := 0
	for _, f := range files {
		n += len(f.matches)
	}
	if opt.Limit > 0 && n > opt.Limit {
		res.Truncated = true
		n = opt.Limit
	}
	res.Matches = make([]SearchMatch, 0, n)
	for _, f := range files {
		if len(res.Matches) >= n {
			break
		}
		take := f.matches
		if room := n - len(res.Matches); len(take) > room {
			take = take[:room]
		}
		res.Matches = append(res.Matches, take...)
		res.Files++
	}
	return res, nil
}

type fileMatches struct {
	path    string
	matches []SearchMatch
}

type searchWorker struct {
	buf        []byte
	scanner    *lineScanner // this worker's own matcher state
	files      []fileMatches
	searched   int
	binary     int
	large      int
	unreadable int
	firstErr   string
	_          [64]byte // keep workers' counters on separate cache lines
}

type searcher struct {
	m       *lineMatcher
	opt     SearchOptions
	workers []searchWorker
	total   atomic.Int64
}

// searchFile searches one file with worker w's buffer and reports whether it
// matched. open opens it without blocking and types it by Fstat: anything
// but a regular file (a FIFO, a device, a file swapped since the listing) is
// skipped unread, and a file larger than the cap by its size is never read.
func (s *searcher) searchFile(w int, rel string, open func() (*os.File, fs.FileInfo, error)) bool {
	sw := &s.workers[w]
	limit := s.opt.MaxFileSize
	f, fi, err := open()
	if err == nil && !fi.Mode().IsRegular() {
		_ = f.Close()
		err = fmt.Errorf("%s is not a regular file (it is %s)", rel, confined.TypeName(fi.Mode()))
	}
	if err != nil {
		sw.unreadable++
		if sw.firstErr == "" {
			sw.firstErr = err.Error()
		}
		return false
	}
	if fi.Size() > limit {
		_ = f.Close()
		sw.large++
		return false
	}
	if int64(cap(sw.buf)) < limit+1 {
		sw.buf = make([]byte, limit+1)
	}
	buf := sw.buf[:limit+1]
	n := 0
	for n < len(buf) {
		k, err := f.Read(buf[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = f.Close()
			sw.unreadable++
			if sw.firstErr == "" {
				sw.firstErr = err.Error()
			}
			return false
		}
		if k == 0 {
			break
		}
	}
	_ = f.Close()
	if int64(n) > limit {
		sw.large++
		return false
	}
	data := buf[:n]
	if bytes.IndexByte(data, 0) >= 0 {
		sw.binary++
		return false
	}
	sw.searched++
	var ms []SearchMatch
	line, last := 1, 0
	if sw.scanner == nil {
		sw.scanner = s.m.newScanner()
	}
	sw.scanner.scan(data, func(ls, le int) {
		line += bytes.Count(data[last:ls], nl)
		last = ls
		text, cut := capLine(data[ls:le], s.opt.MaxLineLen)
		ms = append(ms, SearchMatch{Path: rel, Line: line, Text: text, Cut: cut})
	})
	if len(ms) == 0 {
		return false
	}
	sw.files = append(sw.files, fileMatches{path: rel, matches: ms})
	s.total.Add(int64(len(ms)))
	return true
}

var nl = []byte{'\n'}

// capLine returns the line as a string, without a trailing \r, cut to at
// most n bytes on a rune boundary.
func capLine(b []byte, n int) (string, bool) {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) <= n {
		return string(b), false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]), true
}

// lineMatcher finds the matching lines of a buffer. The engine is a lazily
// built line DFA over Go's regexp/syntax program (linedfa.go), so the
// semantics are Go's RE2 and the cost is linear in the input for every
// pattern. A literal that every match must contain, when there is one, is
// found first with bytes.Index (SIMD-fast) and only the lines holding it go
// through the DFA. A lineMatcher is immutable and shared by all workers;
// each worker scans with its own lineScanner.
type lineMatcher struct {
	prog    *dfaProg
	lit     []byte // a literal every match must contain, case-sensitive
	pureLit bool   // the pattern is exactly lit: no verification needed
}

// lineScanner is one worker's matcher state (the DFA cache); not safe for
// concurrent use.
type lineScanner struct {
	m   *lineMatcher
	dfa *lineDFA
}

func (m *lineMatcher) newScanner() *lineScanner {
	return &lineScanner{m: m, dfa: newLineDFA(m.prog)}
}

func compileLineMatcher(pattern string, ignoreCase bool) (*lineMatcher, error) {
	expr := pattern
	if ignoreCase {
		expr = "(?i)" + expr
	}
	if _, err := regexp.Compile(expr); err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %s (RE2 syntax: no lookaround or backreferences)", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	if hasLiteralNewline(tree) {
		return nil, fmt.Errorf("the pattern %q contains a line break (\\n); matching is line by line, so it can never match: search for one line's text", pattern)
	}
	prog, err := newDFAProg(tree)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	m := &lineMatcher{prog: prog}
	tree = tree.Simplify()
	// U+FFFD also stands for invalid UTF-8, which a byte search would miss.
	if tree.Op == syntax.OpLiteral && !foldMatters(tree) && !slices.Contains(tree.Rune, utf8.RuneError) {
		m.lit, m.pureLit = []byte(string(tree.Rune)), true
		return m, nil
	}
	best := ""
	for _, l := range requiredLiterals(tree) {
		if !l.fold && len(l.s) > len(best) && !strings.ContainsRune(l.s, utf8.RuneError) {
			best = l.s
		}
	}
	// A short literal such as `(` in `(Read|Write)\(` hits on most lines;
	// the DFA alone is faster there.
	if len(best) >= minPrefilterLen {
		m.lit = []byte(best)
	}
	return m, nil
}

// hasLiteralNewline reports whether the pattern has a literal \n, which
// can never match inside a line (rg refuses such patterns too).
func hasLiteralNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral && slices.Contains(re.Rune, '\n') {
		return true
	}
	for _, sub := range re.Sub {
		if hasLiteralNewline(sub) {
			return true
		}
	}
	return false
}

// minPrefilterLen is the shortest required literal used as the prefilter.
const minPrefilterLen = 3

type reqLit struct {
	s    string
	fold bool
}

// foldMatters reports whether a literal node is case-folded and has letters
// whose case can differ.
func foldMatters(re *syntax.Regexp) bool {
	if re.Flags&syntax.FoldCase == 0 {
		return false
	}
	for _, r := range re.Rune {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// requiredLiterals lists literals that every match of re must contain.
func requiredLiterals(re *syntax.Regexp) []reqLit {
	switch re.Op {
	case syntax.OpLiteral:
		return []reqLit{{string(re.Rune), foldMatters(re)}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []reqLit
		for _, sub := range re.Sub {
			out = append(out, requiredLiterals(sub)...)
		}
		return out
	}
	return nil
}

// utf8BOM is skipped at the start of a file, as rg does.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// scan calls emit(lineStart, lineEnd) for every matching line of buf, in
// order; lineEnd excludes the \n.
func (s *lineScanner) scan(buf []byte, emit func(ls, le int)) {
	from := 0
	if bytes.HasPrefix(buf, utf8BOM) {
		from = len(utf8BOM)
	}
	m := s.m
	if m.lit == nil {
		s.dfa.scan(buf, from, emit)
		return
	}
	pos := from
	for pos < len(buf) {
		i := bytes.Index(buf[pos:], m.lit)
		if i < 0 {
			return
		}
		cand := pos + i
		ls := bytes.LastIndexByte(buf[pos:cand], '\n') + 1 + pos
		le := len(buf)
		if j := bytes.IndexByte(buf[cand:], '\n'); j >= 0 {
			le = cand + j
		}
		if m.pureLit || s.dfa.matchLine(buf[ls:le]) {
			emit(ls, le)
		}
		pos = le + 1
	}
}

// fileGlob filters files by name for ripgrep's glob argument.
type fileGlob struct {
	pattern string
	negate  bool
	base    bool // no slash: match the base name only
}

func compileGlob(g string) (*fileGlob, error) {
	if g == "" {
		return nil, nil
	}
	fg := &fileGlob{pattern: g}
	if strings.HasPrefix(g, "!") {
		fg.negate, fg.pattern = true, g[1:]
	}
	fg.pattern = strings.TrimPrefix(fg.pattern, "./")
	fg.base = !strings.Contains(fg.pattern, "/")
	if fg.pattern == "" || !doublestar.ValidatePattern(fg.pattern) {
		return nil, fmt.Errorf("invalid glob %q", g)
	}
	return fg, nil
}

func (g *fileGlob) match(rel string) bool {
	if g == nil {
		return true
	}
	target := rel
	if g.base {
		target = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	ok, _ := doublestar.Match(g.pattern, target)
	return ok != g.negate
}

// describeStatError words a failed stat of a tool's path argument.
func describeStatError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", displayPath(rel))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", displayPath(rel))
	}
	return fmt.Errorf("%s: %v", displayPath(rel), err)
}

// displayPath names a workspace path in messages ("." is the workspace root).
func displayPath(rel string) string {
	if rel == "" || rel == "." {
		return "the workspace root"
	}
	return rel
}
