package tools

import (
	"context"
	"errors"
)

// Prompter asks the user something through the editor. nvim.UI implements it
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

// Question is a choice shown with everything the user decides about: the
// picker's prompt stays one short line while Detail (a whole command, code,
// a diff) is shown in full beside it.
type Question struct {
	// Prompt is one short line (e.g. "Run this command? (13 lines)").
	Prompt string
	// Items are the choices; Safe is the index of the least permissive one,
	// which the editor preselects or lists first (the answer is still an
	// index into Items).
	Items []string
	Safe  int
	// Approval marks a question that approves an action (the statusline says
	// "waiting for approval").
	Approval bool
	// Detail is the full text the question is about; DetailFiletype its
	// syntax (e.g. "sh"); DetailInfo short lines shown above it (working
	// directory, timeout).
	Detail         string
	DetailFiletype string
	DetailInfo     []string
	// Sandbox says how confined the action would run ("not sandboxed"),
	// shown beside DetailInfo; empty when it does not apply.
	Sandbox string
	// CallID is the tool call asking, so the editor can show the detail
	// again later (:FidoShow).
	CallID string
}

// NotSandboxed is Question.Sandbox for an action that runs with the user's
// own rights (a bash_exec command, an MCP server's process).
const NotSandboxed = "not sandboxed"

// Asker is a Prompter that shows a Question's detail in full. Tools ask
// through AskQuestion, which falls back to Select for Prompters without it.
type Asker interface {
	// Ask returns the index into q.Items, or -1 when the user dismissed it.
	Ask(ctx context.Context, q Question) (int, error)
}

// AskQuestion asks q through p's Ask when p has one, else through Select
// with fallbackPrompt (which must then carry the detail itself).
func AskQuestion(ctx context.Context, p Prompter, q Question, fallbackPrompt string) (int, error) {
	if a, ok := p.(Asker); ok {
		return a.Ask(ctx, q)
	}
	return p.Select(ctx, fallbackPrompt, q.Items)
}

// Cancelled reports that a question ended because the user cancelled (the
// turn's context, or the editor's cancel reaching the question first, which
// a Prompter reports as an error wrapping context.Canceled), as opposed to
// the user dismissing the picker.
func Cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled)
}
