package lsp

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
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
func loadError(ws *workspace.Workspace, name, asked, abs string) *tools.Result {
	fi, err := ws.Sandbox.Stat(abs)
	if err != nil {
		return nil
	}
	var res tools.Result
	switch {
	case !fi.Mode().IsRegular():
		res = tools.ErrorResult("%s: %s is not a regular file (it is %s); the LSP tools open only regular files", name, asked, confined.TypeName(fi.Mode()))
	case fi.Size() > MaxLoad:
		res = tools.ErrorResult("%s: %s is too large for the LSP tools (%d bytes; at most %d MiB are loaded into a buffer)", name, asked, fi.Size(), MaxLoad>>20)
	default:
		return nil
	}
	return &res
}

// Tools returns the five read-only LSP tools bound to ws (its editor answers
// them when it has language servers).
func Tools(ws *workspace.Workspace) []tools.Tool {
	return []tools.Tool{
		&positionTool{ws: ws, name: "lsp_definition", method: tools.LSPDefinition, contract: definitionContract},
		&positionTool{ws: ws, name: "lsp_references", method: tools.LSPReferences, contract: referencesContract, limited: true},
		&positionTool{ws: ws, name: "lsp_hover", method: tools.LSPHover, contract: hoverContract},
		&symbolsTool{ws: ws},
		&diagnosticsTool{ws: ws},
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

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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

type positionTool struct {
	ws       *workspace.Workspace
	name     string
	method   string
	contract *tools.Contract
	limited  bool // takes limit
}

func (t *positionTool) Name() string         { return t.name }
func (t *positionTool) Description() string  { return t.contract.Description() }
func (t *positionTool) Access() tools.Access { return tools.ReadOnly }

func (t *positionTool) Parameters() json.RawMessage { return t.contract.Parameters() }

// Contract implements tools.Contracted.
func (t *positionTool) Contract() *tools.Contract { return t.contract }

func (t *positionTool) SummarizeCall(args json.RawMessage) string {
	var p positionParams
	_ = json.Unmarshal(args, &p)
	s := fmt.Sprintf("%s:%d", p.Path, p.Line)
	if p.Symbol != "" {
		s += " " + p.Symbol
	} else if p.Column != nil {
		s += fmt.Sprintf(":%d", *p.Column)
	}
	return tools.Shorten(s, 100)
}

func (t *positionTool) Run(ctx context.Context, _ tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var r referencesParams
	var err error
	if t.limited {
		err = tools.DecodeArgs(args, &r)
	} else {
		err = tools.DecodeArgs(args, &r.positionParams)
	}
	if err != nil {
		return tools.ErrorResult("%s: %v", t.name, err), nil
	}
	p := r.positionParams
	switch {
	case strings.TrimSpace(p.Path) == "":
		return tools.ErrorResult("%s: path is required", t.name), nil
	case p.Line < 1:
		return tools.ErrorResult("%s: line must be 1 or more (one-based), got %d", t.name, p.Line), nil
	case p.Column != nil && p.Symbol != "":
		return tools.ErrorResult("%s: give column or symbol, not both", t.name), nil
	case p.Column == nil && strings.TrimSpace(p.Symbol) == "":
		return tools.ErrorResult("%s: give column (one-based) or symbol (an identifier on line %d)", t.name, p.Line), nil
	case p.Column != nil && *p.Column < 1:
		return tools.ErrorResult("%s: column must be 1 or more (one-based), got %d", t.name, *p.Column), nil
	}
	limit := maxDefinitions
	if t.limited {
		limit = defaultReferences
		if r.Limit != nil {
			if *r.Limit < 1 {
				return tools.ErrorResult("%s: limit must be 1 or more, got %d", t.name, *r.Limit), nil
			}
			limit = min(*r.Limit, maxReferences)
		}
	}
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return tools.ErrorResult("%s: %v", t.name, err), nil
	}
	if res := loadError(t.ws, t.name, p.Path, abs); res != nil {
		return *res, nil
	}
	ls, fail := servers(t.ws, t.name)
	if fail != nil {
		return *fail, nil
	}
	symbol := strings.TrimSpace(p.Symbol)
	pos, fail := place(t.ws, t.name, abs, p.Line, p.Column, symbol)
	if fail != nil {
		return *fail, nil
	}
	ans, fail, err := ask(ctx, t.ws, ls, t.name, tools.LSPQuery{Method: t.method, Path: abs, Position: &pos})
	if fail != nil || err != nil {
		return result(fail), err
	}
	where := fmt.Sprintf("%s:%d", t.ws.Sandbox.Rel(abs), p.Line)
	if symbol != "" {
		where = symbol + " at " + where
	}
	if t.method == tools.LSPHover {
		text := strings.TrimSpace(ans.Hover)
		if text == "" {
			return tools.Result{Content: fmt.Sprintf("%s has no hover information for %s.", ans.Server, where), Summary: "no hover information"}, nil
		}
		return tools.Result{Content: tools.Shorten(text, maxHover), Summary: plural(strings.Count(text, "\n")+1, "line", "lines")}, nil
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
	fmt.Fprintf(&b, "%s of %s (%s):\n", plural(total, what, what+"s"), where, ans.Server)
	shown := ans.Locations[:min(len(ans.Locations), limit)]
	for _, l := range shown {
		b.WriteString(formatLocation(t.ws.Root, l) + "\n")
	}
	if total > len(shown) {
		fmt.Fprintf(&b, "[%d more not shown", total-len(shown))
		if t.limited && limit < maxReferences {
			fmt.Fprintf(&b, "; pass a larger limit (up to %d) to see them", maxReferences)
		}
		b.WriteString("]\n")
	}
	summary := plural(total, what, what+"s")
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

func (t *symbolsTool) Name() string         { return "lsp_symbols" }
func (t *symbolsTool) Description() string  { return symbolsContract.Description() }
func (t *symbolsTool) Access() tools.Access { return tools.ReadOnly }
func (t *symbolsTool) Parameters() json.RawMessage {
	return symbolsContract.Parameters()
}

// Contract implements tools.Contracted.
func (t *symbolsTool) Contract() *tools.Contract { return symbolsContract }

func (t *symbolsTool) SummarizeCall(args json.RawMessage) string {
	var p symbolsParams
	_ = json.Unmarshal(args, &p)
	return tools.Shorten(p.Query, 80)
}

func (t *symbolsTool) Run(ctx context.Context, _ tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var p symbolsParams
	if err := tools.DecodeArgs(args, &p); err != nil {
		return tools.ErrorResult("lsp_symbols: %v", err), nil
	}
	if strings.TrimSpace(p.Query) == "" {
		return tools.ErrorResult("lsp_symbols: query is required (a name or part of one)"), nil
	}
	limit := defaultSymbols
	if p.Limit != nil {
		if *p.Limit < 1 {
			return tools.ErrorResult("lsp_symbols: limit must be 1 or more, got %d", *p.Limit), nil
		}
		limit = min(*p.Limit, maxSymbols)
	}
	ls, fail := servers(t.ws, t.Name())
	if fail != nil {
		return *fail, nil
	}
	ans, fail, err := ask(ctx, t.ws, ls, t.Name(), tools.LSPQuery{Method: tools.LSPSymbols, Query: strings.TrimSpace(p.Query)})
	if fail != nil || err != nil {
		return result(fail), err
	}
	if len(ans.Symbols) == 0 {
		return tools.Result{Content: fmt.Sprintf("%s found no symbol matching %q.", ans.Server, p.Query), Summary: "no symbols"}, nil
	}
	total := max(ans.Total, len(ans.Symbols))
	shown := ans.Symbols[:min(len(ans.Symbols), limit)]
	var b strings.Builder
	fmt.Fprintf(&b, "%s matching %q (%s):\n", plural(total, "symbol", "symbols"), p.Query, ans.Server)
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
	return tools.Result{Content: b.String(), Summary: plural(total, "symbol", "symbols")}, nil
}

type diagnosticsParams struct {
	Path string `json:"path,omitempty" jsonschema:"File relative to the workspace root. Omit for every file loaded in Neovim."`
}

var diagnosticsContract = tools.NewContract[diagnosticsParams](diagnosticsTemplate, tools.Vars{"MaxShown": maxDiagnosticsShown})

type diagnosticsTool struct{ ws *workspace.Workspace }

func (t *diagnosticsTool) Name() string         { return "lsp_diagnostics" }
func (t *diagnosticsTool) Description() string  { return diagnosticsContract.Description() }
func (t *diagnosticsTool) Access() tools.Access { return tools.ReadOnly }
func (t *diagnosticsTool) Parameters() json.RawMessage {
	return diagnosticsContract.Parameters()
}

// Contract implements tools.Contracted.
func (t *diagnosticsTool) Contract() *tools.Contract { return diagnosticsContract }

func (t *diagnosticsTool) SummarizeCall(args json.RawMessage) string {
	var p diagnosticsParams
	_ = json.Unmarshal(args, &p)
	if p.Path == "" {
		return "all loaded buffers"
	}
	return tools.Shorten(p.Path, 100)
}

var severityRank = map[string]int{"error": 0, "warning": 1, "info": 2, "hint": 3}

func (t *diagnosticsTool) Run(ctx context.Context, _ tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var p diagnosticsParams
	if err := tools.DecodeArgs(args, &p); err != nil {
		return tools.ErrorResult("lsp_diagnostics: %v", err), nil
	}
	q := tools.LSPQuery{Method: tools.LSPDiagnostics}
	if strings.TrimSpace(p.Path) != "" {
		abs, err := t.ws.Sandbox.Resolve(p.Path)
		if err != nil {
			return tools.ErrorResult("lsp_diagnostics: %v", err), nil
		}
		if res := loadError(t.ws, t.Name(), p.Path, abs); res != nil {
			return *res, nil
		}
		q.Path = abs
	}
	ls, fail := servers(t.ws, t.Name())
	if fail != nil {
		return *fail, nil
	}
	ans, fail, err := ask(ctx, t.ws, ls, t.Name(), q)
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
			parts = append(parts, plural(counts[s], s, s+"s"))
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
