package files

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed ripgrep.md
var ripgrepTemplate string

const (
	rgDefaultLimit = 100
	rgMaxLimit     = 1000
)

// ripgrepTool is ripgrep: file contents searched with a regular expression.
type ripgrepTool struct{ ws *workspace.Workspace }

func newRipgrep(ws *workspace.Workspace) tools.Tool {
	t := &ripgrepTool{ws: ws}
	return tools.Define(tools.Def[ripgrepParams]{
		Name: "ripgrep", Access: tools.ReadOnly, Contract: ripgrepContract,
		Run: t.run, Summarize: ripgrepParams.summary,
	})
}

type ripgrepParams struct {
	Pattern       string `json:"pattern" jsonschema:"Regular expression (RE2), matched line by line."`
	Path          string `json:"path,omitempty" jsonschema:"Directory or file to search, relative to the workspace root. Default: the root."`
	Glob          string `json:"glob,omitempty" jsonschema:"Only search files matching this glob, e.g. \"*.go\"; a leading ! excludes."`
	IgnoreCase    bool   `json:"ignore_case,omitempty" jsonschema:"Case-insensitive matching. Default false."`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"Also search hidden files and directories. Default false."`
	Limit         int    `json:"limit,omitempty" jsonschema:"Maximum matching lines returned. Default {{.DefaultLimit}}."`
}

var ripgrepContract = tools.NewContract[ripgrepParams](ripgrepTemplate, tools.Vars{
	"DefaultLimit": rgDefaultLimit, "MaxLimit": rgMaxLimit, "MaxFileSize": DefaultMaxSearchFileSize, "MaxLineLen": DefaultMaxLineLen,
}, tools.Minimum("limit", 1), tools.Maximum("limit", rgMaxLimit))

// Validate implements tools.Validator; a limit above the maximum is capped.
func (p *ripgrepParams) Validate() error {
	if p.Pattern == "" {
		return errors.New("pattern is required")
	}
	switch {
	case p.Limit < 0:
		return fmt.Errorf("limit must be positive, got %d", p.Limit)
	case p.Limit == 0:
		p.Limit = rgDefaultLimit
	case p.Limit > rgMaxLimit:
		p.Limit = rgMaxLimit
	}
	return nil
}

func (p ripgrepParams) summary() string {
	s := fmt.Sprintf("%q", text.Shorten(p.Pattern, 60))
	if p.IgnoreCase {
		s += " -i"
	}
	if p.Path != "" && p.Path != "." {
		s += " in " + p.Path
	}
	if p.Glob != "" {
		s += " (" + p.Glob + ")"
	}
	return s
}

func (t *ripgrepTool) run(ctx context.Context, _ tools.Invocation, p ripgrepParams) (tools.Result, error) {
	res, err := Search(ctx, t.ws, p.Path, SearchOptions{
		Pattern: p.Pattern, IgnoreCase: p.IgnoreCase, Glob: p.Glob,
		IncludeHidden: p.IncludeHidden, Limit: p.Limit,
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, err
		}
		return tools.ErrorResult("%v", err), nil
	}
	var b strings.Builder
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "%s:%d:%s", m.Path, m.Line, m.Text)
		if m.Cut {
			b.WriteString("…")
		}
		b.WriteByte('\n')
	}
	if len(res.Matches) == 0 {
		fmt.Fprintf(&b, "(no matches in %d searched files)\n", res.Searched)
	}
	if res.Truncated {
		fmt.Fprintf(&b, "[more: only the first %d matches are shown; narrow path or glob, or raise limit]\n", len(res.Matches))
	}
	var skipped []string
	if res.SkippedBinary > 0 {
		skipped = append(skipped, fmt.Sprintf("%d binary", res.SkippedBinary))
	}
	if res.SkippedLarge > 0 {
		skipped = append(skipped, fmt.Sprintf("%d over 2 MiB", res.SkippedLarge))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "[skipped files: %s]\n", strings.Join(skipped, ", "))
	}
	if res.Unreadable > 0 {
		fmt.Fprintf(&b, "[%d files or directories could not be read, e.g. %s]\n", res.Unreadable, res.FirstError)
	}
	summary := fmt.Sprintf("%s in %s", text.Count(len(res.Matches), "match", "matches"), text.Count(res.Files, "file", "files"))
	if res.Truncated {
		summary = fmt.Sprintf("%d+ matches in %s (limit)", len(res.Matches), text.Count(res.Files, "file", "files"))
	}
	return tools.Result{Content: b.String(), Summary: summary}, nil
}
