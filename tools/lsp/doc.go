// Package lsp owns Fido's use of the editor's language servers: the
// read-only tools lsp_definition, lsp_references, lsp_hover, lsp_symbols and
// lsp_diagnostics, and the interceptor that appends to an edit's tool result
// the diagnostics that edit introduced. It reaches the servers only through
// the editor's tools.LanguageServers capability (Neovim's vim.lsp); Fido runs
// no language server of its own.
package lsp
