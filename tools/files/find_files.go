package files

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed find_files.md
var findFilesTemplate string

const (
	findDefaultLimit = 200
	findMaxLimit     = 1000
)

// findFilesTool is find_files: files and directories by name glob.
type findFilesTool struct{ ws *workspace.Workspace }

func newFindFiles(ws *workspace.Workspace) tools.Tool {
	t := &findFilesTool{ws: ws}
	return tools.Define(tools.Def[findFilesParams]{
		Name: "find_files", Access: tools.ReadOnly, Contract: findFilesContract,
		Run: t.run, Summarize: findFilesParams.summary,
	})
}

type findFilesParams struct {
	Pattern string `json:"pattern" jsonschema:"Name glob, e.g. \"*.go\" (matched against base names) or \"cmd/**/main.go\" (matched against paths)."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search below, relative to the workspace root. Default: the root."`
	Limit   int    `json:"limit,omitempty" jsonschema:"Maximum results. Default {{.DefaultLimit}}."`
}

var findFilesContract = tools.NewContract[findFilesParams](findFilesTemplate, tools.Vars{"DefaultLimit": findDefaultLimit, "MaxLimit": findMaxLimit},
	tools.Minimum("limit", 1), tools.Maximum("limit", findMaxLimit))

// Validate implements tools.Validator; a limit above the maximum is capped.
func (p *findFilesParams) Validate() error {
	if strings.TrimSpace(p.Pattern) == "" {
		return errors.New(`pattern is required, e.g. "*.go"`)
	}
	switch {
	case p.Limit < 0:
		return fmt.Errorf("limit must be positive, got %d", p.Limit)
	case p.Limit == 0:
		p.Limit = findDefaultLimit
	case p.Limit > findMaxLimit:
		p.Limit = findMaxLimit
	}
	return nil
}

func (p findFilesParams) summary() string {
	s := fmt.Sprintf("%q", text.Shorten(p.Pattern, 60))
	if p.Path != "" && p.Path != "." {
		s += " in " + displayDir(p.Path)
	}
	return s
}

// FindResult is the outcome of Workspace.Find.
type FindResult struct {
	Paths      []string // workspace-relative, sorted; directories end in /
	Total      int      // matches found (Paths may hold fewer when limited)
	Unreadable int
	FirstError string
}

// Find lists entries of ws below the workspace-relative directory rel whose
// name (or path, for patterns with a slash) matches the glob pattern. limit
// 0 means no limit.
func Find(ctx context.Context, ws *workspace.Workspace, rel, pattern string, limit int) (*FindResult, error) {
	if pattern == "" {
		return nil, fmt.Errorf("pattern must not be empty")
	}
	pattern = strings.TrimPrefix(pattern, "./")
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("invalid glob pattern %q", pattern)
	}
	abs, err := ws.Sandbox.Resolve(rel)
	if err != nil {
		return nil, err
	}
	fi, err := ws.Sandbox.Stat(abs)
	if err != nil {
		return nil, describeStatError(rel, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory", rel)
	}
	startRel := ws.Sandbox.Rel(abs)
	prefix := ""
	if startRel != "." {
		prefix = startRel + "/"
	}
	nm := newNameMatcher(pattern)
	hidden := strings.HasPrefix(pattern, ".") || strings.Contains(pattern, "/.")
	opt := walkOptions{HiddenDirs: hidden, HiddenFiles: hidden}
	found := make([][]string, opt.workerCount())
	stats := walkDir(ctx, ws.Sandbox, abs, startRel, opt, func(w int, e walkEntry) bool {
		if nm.match(e.Rel, e.Rel[len(prefix):]) {
			p := e.Rel
			if e.isDir() {
				p += "/"
			}
			found[w] = append(found[w], p)
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &FindResult{Unreadable: stats.Unreadable, FirstError: stats.FirstError}
	for _, f := range found {
		res.Paths = append(res.Paths, f...)
	}
	sort.Strings(res.Paths)
	res.Total = len(res.Paths)
	if limit > 0 && len(res.Paths) > limit {
		res.Paths = res.Paths[:limit]
	}
	return res, nil
}

// nameMatcher matches one glob with fast paths for the common shapes
// (`name`, `*.ext`) and doublestar for the rest.
type nameMatcher struct {
	pattern string
	base    bool   // no slash: match base names
	exact   string // base pattern without metacharacters
	suffix  string // base pattern "*" + literal
}

func newNameMatcher(pattern string) *nameMatcher {
	nm := &nameMatcher{pattern: pattern, base: !strings.Contains(pattern, "/")}
	if nm.base {
		switch {
		case !strings.ContainsAny(pattern, `*?[]{}\`):
			nm.exact = pattern
		case pattern[0] == '*' && len(pattern) > 1 && !strings.ContainsAny(pattern[1:], `*?[]{}\`):
			nm.suffix = pattern[1:]
		}
	}
	return nm
}

// match reports whether an entry matches, given its workspace-relative path
// and its path relative to the search directory.
func (nm *nameMatcher) match(rel, fromStart string) bool {
	if nm.base {
		name := rel[strings.LastIndexByte(rel, '/')+1:]
		switch {
		case nm.exact != "":
			return name == nm.exact
		case nm.suffix != "":
			return strings.HasSuffix(name, nm.suffix)
		}
		ok, _ := doublestar.Match(nm.pattern, name)
		return ok
	}
	if ok, _ := doublestar.Match(nm.pattern, fromStart); ok {
		return true
	}
	ok, _ := doublestar.Match(nm.pattern, rel)
	return ok
}

func (t *findFilesTool) run(ctx context.Context, _ tools.Invocation, p findFilesParams) (tools.Result, error) {
	res, err := Find(ctx, t.ws, p.Path, p.Pattern, p.Limit)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, err
		}
		return tools.ErrorResult("%v", err), nil
	}
	var b strings.Builder
	for _, l := range res.Paths {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if res.Total == 0 {
		fmt.Fprintf(&b, "(no matches for %q in %s; ignored and hidden entries were skipped)\n", p.Pattern, displayDir(p.Path))
	} else if len(res.Paths) < res.Total {
		fmt.Fprintf(&b, "[more: %d of %d matches shown; narrow the pattern or path]\n", len(res.Paths), res.Total)
	}
	if res.Unreadable > 0 {
		fmt.Fprintf(&b, "[%d directories could not be read, e.g. %s]\n", res.Unreadable, res.FirstError)
	}
	summary := text.Count(res.Total, "match", "matches")
	if len(res.Paths) < res.Total {
		summary = fmt.Sprintf("%d of %d matches", len(res.Paths), res.Total)
	}
	return tools.Result{Content: b.String(), Summary: summary}, nil
}
