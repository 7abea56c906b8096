// Package lsp owns Fido's use of the editor's language servers: the
// read-only tools lsp_definition, lsp_references, lsp_hover, lsp_symbols and
// lsp_diagnostics, and the interceptor that appends to an edit's tool result
// the diagnostics that edit introduced. It reaches the servers only through
// the editor's tools.LanguageServers capability (Neovim's vim.lsp); Fido runs
// no language server of its own.
//
// The editor passes the servers' answers up as they came; this package
// reads them (reply.go) and converts positions (position.go): the LSP
// position of the model's line and column or symbol, character columns of
// the locations and diagnostics, each from the file's text read here (the
// workspace through its sandbox, other files through tools/confined).
//
// It imports the tool contract (tools), the workspace and tools/confined,
// nothing else of Fido's; only the composition root imports it.
package lsp
