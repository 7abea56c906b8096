package tools

import (
	"context"
	"encoding/json"
)

// LanguageServers is an optional capability of an Editor: the editor's own
// language-server clients (Neovim's vim.lsp), asked for read-only answers and
// watched for the diagnostics an edit introduces. Fido runs no language
// server of its own. The editor passes the servers' answers up as they came
// (tools/lsp reads them: positions, locations, hover text, symbol kinds);
// it reads no file for them. Paths are absolute.
type LanguageServers interface {
	// LSPQuery asks one read-only question. A refusal the model should read
	// (no server attached, Neovim too old) is LSPReply.Error; a returned
	// error is a real fault (the editor went away, ctx ended).
	LSPQuery(ctx context.Context, q LSPQuery) (LSPReply, error)
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
	// Path: the file asked about (definition, references, hover; optional
	// for diagnostics: none means every loaded buffer).
	Path string `json:"path,omitempty"`
	// Position: where in Path (definition, references, hover).
	Position *LSPPosition `json:"position,omitempty"`
	// Query: the workspace-symbol query (symbols).
	Query string `json:"query,omitempty"`
}

// LSPPosition is one place in a file as the LSP counts it: a 0-based line
// and the character offset in each position encoding a server may use.
type LSPPosition struct {
	Line  int `json:"line"`
	UTF8  int `json:"utf-8"`  // bytes
	UTF16 int `json:"utf-16"` // UTF-16 code units (the LSP's default)
	UTF32 int `json:"utf-32"` // code points
}

// LSPReply is what the editor got for an LSPQuery, unread.
type LSPReply struct {
	// Error: a refusal for the model (no server for the file, Neovim too old).
	Error string `json:"error,omitempty"`
	// Server names the servers asked, ", "-separated.
	Server string `json:"server,omitempty"`
	// Results: each server's answer, in the order they arrived.
	Results []LSPResult `json:"results,omitempty"`
	// TimedOut: the wait (TimeoutMS) ended before every server answered.
	TimedOut  bool `json:"timed_out,omitempty"`
	TimeoutMS int  `json:"timeout_ms,omitempty"`
	// Files: the diagnostics asked for, per file (diagnostics).
	Files []FileDiagnostics `json:"files,omitempty"`
}

// LSPResult is one server's raw answer: the LSP result (Location[],
// LocationLink[], Hover, SymbolInformation[] …) or its error.
type LSPResult struct {
	Server string `json:"server"`
	// Encoding is the server's position encoding: utf-8, utf-16 or utf-32.
	Encoding string          `json:"encoding"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Error is the server's error (a ResponseError or a message), if any.
	Error json.RawMessage `json:"error,omitempty"`
}

// Diagnostic is one diagnostic as the editor holds it (Neovim's
// vim.diagnostic): Line and Col are 0-based, Col counts bytes of the
// line; Severity is 1 (error), 2 (warning), 3 (information) or 4 (hint).
type Diagnostic struct {
	Line     int    `json:"lnum"`
	Col      int    `json:"col"`
	Severity int    `json:"severity"`
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

// FileDiagnostics is the diagnostics of one file.
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
