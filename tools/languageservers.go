package tools

import "context"

// LanguageServers is an optional capability of an Editor: the editor's own
// language-server clients (Neovim's vim.lsp), asked for read-only answers and
// watched for the diagnostics an edit introduces. Fido runs no language
// server of its own. Paths are absolute; lines and columns are 1-based and
// columns count characters.
type LanguageServers interface {
	// LSPQuery answers one read-only question. A failure the model should
	// read (no server attached, Neovim too old, timeout) is LSPAnswer.Error;
	// a returned error is a real fault (the editor went away, ctx ended).
	LSPQuery(ctx context.Context, q LSPQuery) (LSPAnswer, error)
	// WatchDiagnostics records the current diagnostics of paths (nil: every
	// loaded buffer) that a language server serves, loading files that are
	// not open into hidden buffers so the user's LSP configuration attaches.
	WatchDiagnostics(ctx context.Context, paths []string) (DiagnosticsWatch, error)
	// SettleDiagnostics waits (at most the configured time) for the next
	// diagnostics of each watched file the change touched (changed: the
	// files a tool wrote; nil: whatever buffers were reloaded) and returns
	// them. It always forgets w.
	SettleDiagnostics(ctx context.Context, w DiagnosticsWatch, changed []string) ([]FileDiagnostics, error)
}

// LSP query methods.
const (
	LSPDefinition  = "definition"
	LSPReferences  = "references"
	LSPHover       = "hover"
	LSPSymbols     = "symbols"
	LSPDiagnostics = "diagnostics"
)

// LSPQuery is one read-only language-server question.
type LSPQuery struct {
	Method string `json:"method"`
	Path   string `json:"path,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Symbol, when set, places the position at the first whole-word
	// occurrence of this identifier on Line.
	Symbol string `json:"symbol,omitempty"`
	Query  string `json:"query,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// LSPAnswer is what the editor answered.
type LSPAnswer struct {
	Error       string       `json:"error,omitempty"`
	Server      string       `json:"server,omitempty"`
	Locations   []Location   `json:"locations,omitempty"`
	Hover       string       `json:"hover,omitempty"`
	Symbols     []Symbol     `json:"symbols,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Total counts the results before Limit was applied.
	Total int `json:"total,omitempty"`
}

// Location is a place in a file with the text of its line.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Text string `json:"text,omitempty"`
}

// Symbol is one workspace symbol.
type Symbol struct {
	Name      string `json:"name"`
	Kind      string `json:"kind,omitempty"`
	Container string `json:"container,omitempty"`
	Location
}

// Diagnostic is one diagnostic of a file. Severity is "error", "warning",
// "info" or "hint".
type Diagnostic struct {
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Source   string `json:"source,omitempty"`
}

// DiagnosticsWatch is the state before a change, from WatchDiagnostics.
type DiagnosticsWatch struct {
	ID int `json:"id"`
	// Disabled: the user turned post-edit diagnostics off (or Neovim lacks
	// what they need); nothing is watched.
	Disabled bool              `json:"disabled,omitempty"`
	Files    []FileDiagnostics `json:"files,omitempty"`
}

// FileDiagnostics is the diagnostics of one file served by language servers.
type FileDiagnostics struct {
	Path        string       `json:"path"`
	Servers     []string     `json:"servers,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Changed: the buffer was re-read after the change (SettleDiagnostics).
	Changed bool `json:"changed,omitempty"`
	// Fresh: the servers published diagnostics after the change (false: the
	// wait ended first, Diagnostics are what the editor had by then).
	Fresh bool `json:"fresh,omitempty"`
}
