package tools

import "context"

// Prompter asks the user something through the editor. agent.UI satisfies it
// (the Neovim host implements it with vim.ui.select and vim.ui.input); it is
// defined here so package tools does not import agent.
type Prompter interface {
	// Select asks the user to pick one of items; it returns -1 when the user
	// dismissed the prompt. It blocks until the user answers or ctx ends.
	Select(ctx context.Context, prompt string, items []string) (int, error)
	// Input asks for a line of text, pre-filled with def; ok is false when
	// the user dismissed the prompt.
	Input(ctx context.Context, prompt, def string) (text string, ok bool, err error)
}
