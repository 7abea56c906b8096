package lsp

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

var (
	//go:embed lsp_definition.md
	definitionTemplate string
	//go:embed lsp_references.md
	referencesTemplate string
	//go:embed lsp_hover.md
	hoverTemplate string
	//go:embed lsp_symbols.md
	symbolsTemplate string
	//go:embed lsp_diagnostics.md
	diagnosticsTemplate string
)

// Output bounds.
const (
	maxDefinitions      = 20
	defaultReferences   = 50
	maxReferences       = 200
	defaultSymbols      = 30
	maxSymbols          = 100
	maxDiagnosticsShown = 100
	maxHover            = 4000 // runes
	// MaxLoad is the largest file an LSP tool loads into a buffer (Lua's
	// max_load: larger files are not opened for a server).
	MaxLoad = 4 << 20
)

// loadError refuses, before Neovim is asked, a path that must not be
// loaded into a buffer: a FIFO (opening it waits for a writer: Neovim
// froze for 20 s), a device, a directory, or a file over MaxLoad. A
// missing file is left to the language server's answer.
func loadError(ws *workspace.Workspace, asked, abs string) *tools.Result {
	fi, err := ws.Sandbox.Stat(abs)
	if err != nil {
		return nil
	}
	var res tools.Result
	switch {
	case !fi.Mode().IsRegular():
		res = tools.ErrorResult("%s is not a regular file (it is %s); the LSP tools open only regular files", asked, confined.TypeName(fi.Mode()))
	case fi.Size() > MaxLoad:
		res = tools.ErrorResult("%s is too large for the LSP tools (%d bytes; at most %s are loaded into a buffer)", asked, fi.Size(), text.Size(MaxLoad))
	default:
		return nil
	}
	return &res
}

// Tools returns the five read-only LSP tools bound to ws (its editor answers
// them when it has language servers).
func Tools(ws *workspace.Workspace) []tools.Tool {
	return []tools.Tool{
		newPositionTool(ws, "lsp_definition", tools.LSPDefinition, definitionContract),
		newReferences(ws),
		newPositionTool(ws, "lsp_hover", tools.LSPHover, hoverContract),
		newSymbols(ws),
		newDiagnostics(ws),
	}
}

func formatLocation(root string, l location) string {
	p := display(root, l.Path)
	s := fmt.Sprintf("%s:%d:%d", p, l.Line, l.Col)
	if p == l.Path {
		s += " (outside the workspace)"
	}
	if l.Text != "" {
		s += ": " + l.Text
	}
	return s
}

// positionParams are the arguments of the tools that ask about one place.
type positionParams struct {
	Path   string `json:"path" jsonschema:"File relative to the workspace root."`
	Line   int    `json:"line" jsonschema:"One-based line number."`
	Column *int   `json:"column,omitempty" jsonschema:"One-based column in characters. Give column or symbol."`
	Symbol string `json:"symbol,omitempty" jsonschema:"Identifier on that line; its first whole-word occurrence is used. Give column or symbol."`
}

// referencesParams adds limit (lsp_references).
type referencesParams struct {
	positionParams
	Limit *int `json:"limit,omitempty" jsonschema:"Most results to list. Default {{.DefaultLimit}}."`
}

var (
	definitionContract = tools.NewContract[positionParams](definitionTemplate, nil, tools.Minimum("line", 1), tools.Minimum("column", 1))
	hoverContract      = tools.NewContract[positionParams](hoverTemplate, tools.Vars{"MaxHover": maxHover},
		tools.Minimum("line", 1), tools.Minimum("column", 1))
	referencesContract = tools.NewContract[referencesParams](referencesTemplate, tools.Vars{"DefaultLimit": defaultReferences, "MaxLimit": maxReferences},
		tools.Minimum("line", 1), tools.Minimum("column", 1), tools.Minimum("limit", 1), tools.Maximum("limit", maxReferences))
)

// positionTool is a tool that asks about one place (lsp_definition,
// lsp_hover; lsp_references adds a limit).
type positionTool struct {
	ws     *workspace.Workspace
	method string
}

func newPositionTool(ws *workspace.Workspace, name, method string, contract *tools.Contract) tools.Tool {
	t := &positionTool{ws: ws, method: method}
	return tools.Define(tools.Def[positionParams]{
		Name: name, Access: tools.ReadOnly, Contract: contract, Summarize: positionParams.summary,
		Run: func(ctx context.Context, _ tools.Invocation, p positionParams) (tools.Result, error) {
			return t.run(ctx, p, maxDefinitions, false)
		},
	})
}

func newReferences(ws *workspace.Workspace) tools.Tool {
	t := &positionTool{ws: ws, method: tools.LSPReferences}
	return tools.Define(tools.Def[referencesParams]{
		Name: "lsp_references", Access: tools.ReadOnly, Contract: referencesContract,
		Summarize: func(p referencesParams) string { return p.summary() },
		Run: func(ctx context.Context, _ tools.Invocation, p referencesParams) (tools.Result, error) {
			limit := defaultReferences
			if p.Limit != nil {
				limit = min(*p.Limit, maxReferences)
			}
			return t.run(ctx, p.positionParams, limit, true)
		},
	})
}

// Validate implements tools.Validator.
func (p *positionParams) Validate() error {
	switch {
	case strings.TrimSpace(p.Path) == "":
		return errors.New("path is required")
	case p.Line < 1:
		return fmt.Errorf("line must be 1 or more (one-based), got %d", p.Line)
	case p.Column != nil && p.Symbol != "":
		return errors.New("give column or symbol, not both")
	case p.Column == nil && strings.TrimSpace(p.Symbol) == "":
		return fmt.Errorf("give column (one-based) or symbol (an identifier on line %d)", p.Line)
	case p.Column != nil && *p.Column < 1:
		return fmt.Errorf("column must be 1 or more (one-based), got %d", *p.Column)
	}
	return nil
}

// Validate implements tools.Validator.
func (p *referencesParams) Validate() error {
	if err := p.positionParams.Validate(); err != nil {
		return err
	}
	if p.Limit != nil && *p.Limit < 1 {
		return fmt.Errorf("limit must be 1 or more, got %d", *p.Limit)
	}
	return nil
}

func (p positionParams) summary() string {
	s := fmt.Sprintf("%s:%d", p.Path, p.Line)
	if p.Symbol != "" {
		s += " " + p.Symbol
	} else if p.Column != nil {
		s += fmt.Sprintf(":%d", *p.Column)
	}
	return text.Shorten(s, 100)
}

// run asks the language server about p's place; limited: the call takes a
// limit (lsp_references), which the answer mentions when it cuts.
func (t *positionTool) run(ctx context.Context, p positionParams, limit int, limited bool) (tools.Result, error) {

	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	if res := loadError(t.ws, p.Path, abs); res != nil {
		return *res, nil
	}
	ls, fail := servers(t.ws)
	if fail != nil {
		return *fail, nil
	}
	symbol := strings.TrimSpace(p.Symbol)
	pos, fail := place(t.ws, abs, p.Line, p.Column, symbol)
	if fail != nil {
		return *fail, nil
	}
	ans, fail, err := ask(ctx, t.ws, ls, tools.LSPQuery{Method: t.method, Path: abs, Position: &pos})
	if fail != nil || err != nil {
		return result(fail), err
	}
	where := fmt.Sprintf("%s:%d", t.ws.Sandbox.Rel(abs), p.Line)
	if symbol != "" {
		where = symbol + " at " + where
	}
	if t.method == tools.LSPHover {
		hover := strings.TrimSpace(ans.Hover)
		if hover == "" {
			return tools.Result{Content: fmt.Sprintf("%s has no hover information for %s.", ans.Server, where), Summary: "no hover information"}, nil
		}
		return tools.Result{Content: text.Shorten(hover, maxHover), Summary: text.Count(strings.Count(hover, "\n")+1, "line", "lines")}, nil
	}
	what := "definition"
	if t.method == tools.LSPReferences {
		what = "reference"
	}
	if len(ans.Locations) == 0 {
		return tools.Result{Content: fmt.Sprintf("%s found no %s of %s.", ans.Server, what, where), Summary: "no " + what + "s"}, nil
	}
	total := max(ans.Total, len(ans.Locations))
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s (%s):\n", text.Count(total, what, what+"s"), where, ans.Server)
	shown := ans.Locations[:min(len(ans.Locations), limit)]
	for _, l := range shown {
		b.WriteString(formatLocation(t.ws.Root, l) + "\n")
	}
	if total > len(shown) {
		fmt.Fprintf(&b, "[%d more not shown", total-len(shown))
		if limited && limit < maxReferences {
			fmt.Fprintf(&b, "; pass a larger limit (up to %d) to see them", maxReferences)
		}
		b.WriteString("]\n")
	}
	summary := text.Count(total, what, what+"s")
	if len(shown) == 1 && t.method == tools.LSPDefinition {
		summary = display(t.ws.Root, shown[0].Path) + fmt.Sprintf(":%d", shown[0].Line)
	}
	return tools.Result{Content: b.String(), Summary: summary}, nil
}

func result(r *tools.Result) tools.Result {
	if r == nil {
		return tools.Result{}
	}
	return *r
}

type symbolsParams struct {
	Query string `json:"query" jsonschema:"Name or part of a name, as the language server matches it (often fuzzy)."`
	Limit *int   `json:"limit,omitempty" jsonschema:"Most symbols to list. Default {{.DefaultLimit}}."`
}

var symbolsContract = tools.NewContract[symbolsParams](symbolsTemplate, tools.Vars{"DefaultLimit": defaultSymbols, "MaxLimit": maxSymbols},
	tools.Minimum("limit", 1), tools.Maximum("limit", maxSymbols))

type symbolsTool struct{ ws *workspace.Workspace }

func newSymbols(ws *workspace.Workspace) tools.Tool {
	t := &symbolsTool{ws: ws}
	return tools.Define(tools.Def[symbolsParams]{
		Name: "lsp_symbols", Access: tools.ReadOnly, Contract: symbolsContract,
		Run: t.run, Summarize: func(p symbolsParams) string { return text.Shorten(p.Query, 80) },
	})
}

// Validate implements tools.Validator.
func (p *symbolsParams) Validate() error {
	if strings.TrimSpace(p.Query) == "" {
		return errors.New("query is required (a name or part of one)")
	}
	if p.Limit != nil && *p.Limit < 1 {
		return fmt.Errorf("limit must be 1 or more, got %d", *p.Limit)
	}
	return nil
}

func (t *symbolsTool) run(ctx context.Context, _ tools.Invocation, p symbolsParams) (tools.Result, error) {
	limit := defaultSymbols
	if p.Limit != nil {
		limit = min(*p.Limit, maxSymbols)
	}
	ls, fail := servers(t.ws)
	if fail != nil {
		return *fail, nil
	}
	ans, fail, err := ask(ctx, t.ws, ls, tools.LSPQuery{Method: tools.LSPSymbols, Query: strings.TrimSpace(p.Query)})
	if fail != nil || err != nil {
		return result(fail), err
	}
	if len(ans.Symbols) == 0 {
		return tools.Result{Content: fmt.Sprintf("%s found no symbol matching %q.", ans.Server, p.Query), Summary: "no symbols"}, nil
	}
	total := max(ans.Total, len(ans.Symbols))
	shown := ans.Symbols[:min(len(ans.Symbols), limit)]
	var b strings.Builder
	fmt.Fprintf(&b, "%s matching %q (%s):\n", text.Count(total, "symbol", "symbols"), p.Query, ans.Server)
	for _, s := range shown {
		name := s.Name
		if s.Container != "" {
			name = s.Container + "." + s.Name
		}
		fmt.Fprintf(&b, "%s %s — %s\n", s.Kind, name, formatLocation(t.ws.Root, s.Location))
	}
	if total > len(shown) {
		fmt.Fprintf(&b, "[%d more not shown; narrow the query or pass a larger limit (up to %d)]\n", total-len(shown), maxSymbols)
	}
	return tools.Result{Content: b.String(), Summary: text.Count(total, "symbol", "symbols")}, nil
}

type diagnosticsParams struct {
	Path string `json:"path,omitempty" jsonschema:"File relative to the workspace root. Omit for every file loaded in Neovim."`
}

var diagnosticsContract = tools.NewContract[diagnosticsParams](diagnosticsTemplate, tools.Vars{"MaxShown": maxDiagnosticsShown})

type diagnosticsTool struct{ ws *workspace.Workspace }

func newDiagnostics(ws *workspace.Workspace) tools.Tool {
	t := &diagnosticsTool{ws: ws}
	return tools.Define(tools.Def[diagnosticsParams]{
		Name: "lsp_diagnostics", Access: tools.ReadOnly, Contract: diagnosticsContract,
		Run: t.run, Summarize: diagnosticsParams.summary,
	})
}

func (p diagnosticsParams) summary() string {
	if p.Path == "" {
		return "all loaded buffers"
	}
	return text.Shorten(p.Path, 100)
}

var severityRank = map[string]int{"error": 0, "warning": 1, "info": 2, "hint": 3}

func (t *diagnosticsTool) run(ctx context.Context, _ tools.Invocation, p diagnosticsParams) (tools.Result, error) {
	q := tools.LSPQuery{Method: tools.LSPDiagnostics}
	if strings.TrimSpace(p.Path) != "" {
		abs, err := t.ws.Sandbox.Resolve(p.Path)
		if err != nil {
			return tools.ErrorResult("%v", err), nil
		}
		if res := loadError(t.ws, p.Path, abs); res != nil {
			return *res, nil
		}
		q.Path = abs
	}
	ls, fail := servers(t.ws)
	if fail != nil {
		return *fail, nil
	}
	ans, fail, err := ask(ctx, t.ws, ls, q)
	if fail != nil || err != nil {
		return result(fail), err
	}
	ds := ans.Diagnostics
	scope := "the loaded buffers"
	if q.Path != "" {
		scope = t.ws.Sandbox.Rel(q.Path)
	}
	if len(ds) == 0 {
		return tools.Result{Content: fmt.Sprintf("No diagnostics in %s.", scope), Summary: "no diagnostics"}, nil
	}
	counts := map[string]int{}
	for _, d := range ds {
		counts[d.Severity]++
	}
	// Most severe first, then by file and line.
	sortDiagnostics(ds)
	var b strings.Builder
	var parts []string
	for _, s := range []string{"error", "warning", "info", "hint"} {
		if counts[s] > 0 {
			parts = append(parts, text.Count(counts[s], s, s+"s"))
		}
	}
	fmt.Fprintf(&b, "%s in %s:\n", strings.Join(parts, ", "), scope)
	for i, d := range ds {
		if i == maxDiagnosticsShown {
			fmt.Fprintf(&b, "[%d more not shown; ask for one file with path]\n", len(ds)-i)
			break
		}
		b.WriteString(formatDiagnostic(display(t.ws.Root, d.Path), d) + "\n")
	}
	return tools.Result{Content: b.String(), Summary: strings.Join(parts, ", ")}, nil
}
