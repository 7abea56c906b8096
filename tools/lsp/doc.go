// Package lsp owns Fido's use of the editor's language servers: the
// read-only tools lsp_definition, lsp_references, lsp_hover, lsp_symbols and
// lsp_diagnostics, and the interceptor that appends to an edit's tool result
// the diagnostics that edit introduced. It reaches the servers only through
// the editor's tools.LanguageServers capability (Neovim's vim.lsp); Fido runs
// no language server of its own.
//
// It imports the tool contract (tools) and the workspace, nothing else of
// Fido's; only the composition root imports it.
package lsp
