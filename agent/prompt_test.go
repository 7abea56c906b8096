package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The system prompt explains the LSP tools and the diagnostics edits report,
// and stays byte-identical for the same input.
func TestSystemPromptGuidesLSPTools(t *testing.T) {
	in := PromptInput{Root: "/w", Listing: "go.mod\n", ToolNames: []string{"lsp_definition", "patch"}}
	p := BuildSystemPrompt(in)
	assert.Equal(t, p, BuildSystemPrompt(in))
	for _, want := range []string{"# Language servers (lsp_*)", "lsp_definition, lsp_references, lsp_hover, lsp_symbols and lsp_diagnostics",
		"identifier as symbol", "the errors and warnings the edit introduced"} {
		assert.Contains(t, p, want)
	}
}
