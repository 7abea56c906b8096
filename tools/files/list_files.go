package files

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed list_files.md
var listFilesTemplate string

const (
	listDefaultLimit = 200
	listMaxLimit     = 1000
)

// listFilesTool is list_files: one directory, optionally recursively.
type listFilesTool struct{ ws *workspace.Workspace }

func newListFiles(ws *workspace.Workspace) tools.Tool {
	t := &listFilesTool{ws: ws}
	return tools.Define(tools.Def[listFilesParams]{
		Name: "list_files", Access: tools.ReadOnly, Contract: listFilesContract,
		Run: t.run, Summarize: listFilesParams.summary,
	})
}

type listFilesParams struct {
	Path          string `json:"path" jsonschema:"Directory relative to the workspace root; \".\" for the root."`
	Recursive     bool   `json:"recursive,omitempty" jsonschema:"List everything below path, not only its direct children. Default false."`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"Also list directories whose name starts with a dot. Default false."`
	Offset        int    `json:"offset,omitempty" jsonschema:"Number of entries to skip (pagination). Default 0."`
	Limit         int    `json:"limit,omitempty" jsonschema:"Maximum entries to return. Default {{.DefaultLimit}}."`
}

var listFilesContract = tools.NewContract[listFilesParams](listFilesTemplate, tools.Vars{"DefaultLimit": listDefaultLimit, "MaxLimit": listMaxLimit},
	tools.Minimum("offset", 0), tools.Minimum("limit", 1), tools.Maximum("limit", listMaxLimit))

// Validate implements tools.Validator; a limit above the maximum is capped.
func (p *listFilesParams) Validate() error {
	if p.Offset < 0 {
		return fmt.Errorf("offset must be 0 or more, got %d", p.Offset)
	}
	switch {
	case p.Limit < 0:
		return fmt.Errorf("limit must be positive, got %d", p.Limit)
	case p.Limit == 0:
		p.Limit = listDefaultLimit
	case p.Limit > listMaxLimit:
		p.Limit = listMaxLimit
	}
	return nil
}

func (p listFilesParams) summary() string {
	s := displayDir(p.Path)
	if p.Recursive {
		s += " (recursive)"
	}
	if p.Offset > 0 {
		s += fmt.Sprintf(" from %d", p.Offset)
	}
	return s
}

func (t *listFilesTool) run(ctx context.Context, _ tools.Invocation, p listFilesParams) (tools.Result, error) {
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	fi, err := t.ws.Sandbox.Stat(abs)
	if err != nil {
		return tools.ErrorResult("%v", describeStatError(p.Path, err)), nil
	}
	if !fi.IsDir() {
		return tools.ErrorResult("%s is a file, not a directory; use read_file to read it", p.Path), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	if _, ignored := ignoreChainFor(t.ws.Sandbox, rel); ignored {
		// git lists nothing below an ignored directory, not even files a
		// negation inside it seems to re-include.
		return tools.Result{
			Content: fmt.Sprintf("(no entries: %s is ignored by .gitignore, so nothing in it is listed; read_file still reads a file in it by path)\n", displayDir(rel)),
			Summary: "0 entries (ignored directory)",
		}, nil
	}
	key := listingKey{root: t.ws.Root, rel: rel, recursive: p.Recursive, hidden: p.IncludeHidden}
	l := listings.get(key, p.Offset > 0)
	if l == nil {
		l = walkListing(ctx, t.ws.Sandbox, abs, key)
		if err := ctx.Err(); err != nil {
			return tools.Result{}, err
		}
		listings.put(key, l)
	}
	all, stats := l.entries, l.stats
	total := len(all)
	var b strings.Builder
	if p.Offset >= total && total > 0 {
		return tools.ErrorResult("offset %d is past the end: %s has %d entries", p.Offset, displayDir(rel), total), nil
	}
	end := min(total, p.Offset+p.Limit)
	page := all[min(p.Offset, total):end]
	for _, l := range page {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	switch {
	case total == 0:
		b.WriteString("(no entries: the directory is empty or everything in it is hidden or ignored)\n")
	case end < total:
		fmt.Fprintf(&b, "[more: %d of %d entries shown; call list_files with offset=%d for the next page]\n", len(page), total, end)
	}
	if stats.Unreadable > 0 {
		fmt.Fprintf(&b, "[%d directories could not be read, e.g. %s]\n", stats.Unreadable, stats.FirstError)
	}
	summary := fmt.Sprintf("%d entries", total)
	if len(page) < total {
		summary = fmt.Sprintf("%d of %d entries", len(page), total)
	}
	return tools.Result{Content: b.String(), Summary: summary}, nil
}

// entryLine renders one listing line: directories end in /, links show their target.
func entryLine(e walkEntry) string {
	switch {
	case e.isDir():
		return e.Rel + "/"
	case e.isLink():
		target, err := e.readlink()
		if err != nil {
			return e.Rel + " -> ?"
		}
		return e.Rel + " -> " + filepath.ToSlash(target)
	}
	return e.Rel
}

// displayDir names a directory argument in summaries.
func displayDir(p string) string {
	if p == "" || p == "." || p == "./" {
		return "./"
	}
	return strings.TrimSuffix(p, "/") + "/"
}

// Paging through a long listing must not walk the tree once per page: the
// first page walks and keeps the sorted listing, later pages (offset > 0)
// reuse it while the tree is unchanged. "Unchanged" is checked, not
// assumed: every directory the walk read and every ignore file that
// applied must still have the modification time (and size) it had, which
// costs one stat per directory instead of a listing and ignore matching per
// entry. A first page always walks afresh.

// listingTTL bounds how long a kept listing is trusted at all (file systems
// with coarse timestamps could hide a change made within the same tick).
const listingTTL = 2 * time.Minute

// listingClockSlack covers file-system timestamps coarser than time.Now.
const listingClockSlack = 50 * time.Millisecond

// listingCacheSize is how many listings are kept (one per recent path and options).
const listingCacheSize = 4

type listingKey struct {
	root, rel         string
	recursive, hidden bool
}

type listing struct {
	key     listingKey
	entries []string
	stats   walkStats
	stamps  []workspace.FileStamp
	made    time.Time
}

// fresh reports whether nothing the listing was built from has changed.
func (l *listing) fresh() bool {
	if time.Since(l.made) > listingTTL {
		return false
	}
	for _, s := range l.stamps {
		if workspace.StampOf(s.Path) != s {
			return false
		}
	}
	return true
}

type listingCache struct {
	mu   sync.Mutex
	list []*listing // most recent first
}

var listings listingCache

// listingWalks counts tree walks made for list_files (tests check paging reuses them).
var listingWalks atomic.Int64

// get returns a kept listing for key when reuse is allowed and it is fresh.
func (c *listingCache) get(key listingKey, reuse bool) *listing {
	if !reuse {
		return nil
	}
	c.mu.Lock()
	var l *listing
	for _, x := range c.list {
		if x.key == key {
			l = x
			break
		}
	}
	c.mu.Unlock()
	if l == nil || !l.fresh() {
		return nil
	}
	return l
}

func (c *listingCache) put(key listingKey, l *listing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = slices.DeleteFunc(c.list, func(x *listing) bool { return x.key == key })
	c.list = append([]*listing{l}, c.list...)
	if len(c.list) > listingCacheSize {
		c.list = c.list[:listingCacheSize]
	}
}

// walkListing walks the directory abs once and returns its sorted listing
// with the stamps that later show whether it is still current.
func walkListing(ctx context.Context, sb *workspace.Sandbox, abs string, key listingKey) *listing {
	root := sb.Root()
	listingWalks.Add(1)
	made := time.Now()
	opt := walkOptions{HiddenDirs: key.hidden, HiddenFiles: true}
	if !key.recursive {
		opt.MaxDepth = 1
	}
	n := opt.workerCount()
	lines := make([][]string, n)
	watch := make([][]string, n) // directories read and ignore files seen
	stats := walkDir(ctx, sb, abs, key.rel, opt, func(w int, e walkEntry) bool {
		lines[w] = append(lines[w], entryLine(e))
		if (e.isDir() && key.recursive) || e.Type.IsRegular() && filepath.Base(e.Rel) == ".gitignore" {
			watch[w] = append(watch[w], e.Abs)
		}
		return true
	})
	l := &listing{key: key, stats: stats, made: made}
	for _, x := range lines {
		l.entries = append(l.entries, x...)
	}
	sort.Strings(l.entries)
	// The ignore files that apply from above, the start directory itself,
	// and what the walk read below it.
	paths := []string{filepath.Join(root, ".git", "info", "exclude"), filepath.Join(root, ".gitignore"), abs}
	if key.rel != "." && key.rel != "" {
		parts := strings.Split(key.rel, "/")
		for i := range parts {
			paths = append(paths, filepath.Join(root, filepath.FromSlash(strings.Join(parts[:i+1], "/")), ".gitignore"))
		}
	}
	for _, x := range watch {
		paths = append(paths, x...)
	}
	for _, p := range paths {
		st := workspace.StampOf(p)
		// Changed while walking, or too recently for a coarse file-system
		// clock to tell a later change apart: never reuse.
		if st.ModTime.After(made.Add(-listingClockSlack)) {
			l.made = time.Time{}
		}
		l.stamps = append(l.stamps, st)
	}
	return l
}
