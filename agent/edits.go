package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

// Edit modes: "auto" applies file changes at once, "review" shows each
// patch, rm and rmdir call and asks first (/edits, setup({ edits })).
const (
	EditsAuto   = "auto"
	EditsReview = "review"
)

// The review question's items; EditChoices lists them in the order shown,
// the safe one first (a stray <CR> applies nothing).
const (
	EditReject       = "Reject"
	EditRejectReason = "Reject with reason…"
	EditApply        = "Apply"
	EditApplyAll     = "Apply all this turn"
)

// EditChoices are the review question's items, in this order.
var EditChoices = []string{EditReject, EditRejectReason, EditApply, EditApplyAll}

// editTrust is what the user trusts Fido's file changes with: the edit
// mode and "Apply all this turn", the open :FidoReview, and the reverts
// made there, told to the model with the next user message. Its gate asks
// about each change in review mode; review.go shows and reverts changes
// afterwards, rewind.go rewinds them. Its lock guards only these.
type editTrust struct {
	mu       sync.Mutex
	edits    string
	applyAll bool
	// review is the open :FidoReview; notes are what the user reverted
	// there, for the next user message.
	review *reviewState
	notes  []string

	gate *editGate
	ws   *workspace.Workspace // nil: nothing to review
}

func newEditTrust(edits string, ws *workspace.Workspace, modes *settings, p tools.Prompter, ed EditorSurface) *editTrust {
	t := &editTrust{edits: EditsAuto, ws: ws}
	if edits == EditsReview {
		t.edits = EditsReview
	}
	t.gate = &editGate{trust: t, modes: modes, prompter: p, editor: ed}
	return t
}

// mode is the edit mode.
func (t *editTrust) mode() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.edits
}

func (t *editTrust) setMode(edits string) {
	t.mu.Lock()
	t.edits = edits
	t.mu.Unlock()
}

// newTurn ends "Apply all this turn" and takes the revert notes for the
// turn's user message.
func (t *editTrust) newTurn() (notes []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applyAll = false
	notes, t.notes = t.notes, nil
	return notes
}

// giveBack puts notes of a message that was not kept back before the
// newer ones: they go with the next message.
func (t *editTrust) giveBack(notes []string) {
	t.mu.Lock()
	t.notes = append(notes, t.notes...)
	t.mu.Unlock()
}

func (t *editTrust) note(n string) {
	t.mu.Lock()
	t.notes = append(t.notes, n)
	t.mu.Unlock()
}

// forget closes the review and drops the notes (another conversation, a
// rewind).
func (t *editTrust) forget() {
	t.mu.Lock()
	t.review, t.notes = nil, nil
	t.mu.Unlock()
}

// editGate is the session's tools.EditGate. Approvals run one at a time:
// the preview and the picker of the next change wait until the user
// answered the previous one.
type editGate struct {
	trust    *editTrust
	modes    *settings
	prompter tools.Prompter
	editor   EditorSurface // nil: the diff goes into the question
	mu       sync.Mutex
}

// Reviewing reports whether changes must be approved now: review mode, and
// the user did not choose "Apply all this turn" nor switch to auto-edit.
func (g *editGate) Reviewing() bool {
	mode := g.modes.Mode()
	g.trust.mu.Lock()
	defer g.trust.mu.Unlock()
	return g.trust.edits == EditsReview && !g.trust.applyAll && mode != ModeAutoEdit
}

// Approve shows the change and asks. Dismissing the picker rejects.
func (g *editGate) Approve(ctx context.Context, p tools.EditProposal) (tools.EditDecision, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.Reviewing() {
		return tools.EditDecision{Apply: true}, nil
	}
	diff := workspace.UnifiedDiff(p.Files)
	if p.Note != "" {
		diff = "# " + p.Note + "\n" + diff
	}
	title := p.Tool + " " + p.Summary
	idx, err := g.ask(ctx, title, editPrompt(p), diff)
	if err != nil {
		return tools.EditDecision{}, err
	}
	if idx < 0 || idx >= len(EditChoices) {
		return tools.EditDecision{}, nil
	}
	switch EditChoices[idx] {
	case EditApply:
		return tools.EditDecision{Apply: true}, nil
	case EditApplyAll:
		g.trust.mu.Lock()
		g.trust.applyAll = true
		g.trust.mu.Unlock()
		return tools.EditDecision{Apply: true}, nil
	case EditRejectReason:
		reason, ok, err := g.prompter.Input(ctx, "Why reject this change? ", "")
		if err != nil {
			return tools.EditDecision{}, err
		}
		if ok {
			return tools.EditDecision{Reason: strings.TrimSpace(reason)}, nil
		}
	}
	return tools.EditDecision{}, nil
}

// ask asks the review question. A prompter that shows a question's detail
// gets the diff as one (whole, scrollable, beside the choices); otherwise
// the editor shows it with ShowEdit while the picker asks, and without an
// editor the diff goes into the prompt itself.
func (g *editGate) ask(ctx context.Context, title, prompt, diff string) (int, error) {
	q := tools.Question{Prompt: prompt, Items: EditChoices, Safe: 0, Approval: true,
		Detail: diff, DetailFiletype: "diff", DetailInfo: []string{title}}
	if _, ok := g.prompter.(tools.Asker); ok || g.editor == nil {
		return tools.AskQuestion(ctx, g.prompter, q, prompt+"\n"+diff)
	}
	g.editor.ShowEdit(title, diff)
	defer g.editor.ShowEdit("", "")
	return g.prompter.Select(ctx, prompt, EditChoices)
}

// editPrompt is the picker's question: the call and its files.
func editPrompt(p tools.EditProposal) string {
	var parts []string
	for _, f := range p.Files {
		switch {
		case !f.Existed:
			parts = append(parts, "new "+f.Path)
		case !f.Exists:
			parts = append(parts, "delete "+f.Path)
		default:
			parts = append(parts, f.Path)
		}
	}
	if len(parts) > 6 {
		parts = append(parts[:6], fmt.Sprintf("… %d more", len(parts)-6))
	}
	return fmt.Sprintf("Fido %s: %s — apply?", p.Tool, strings.Join(parts, ", "))
}

// reviewState is the open review's range of changes: the conversation's
// newest turn that changed files (turn), or all of it. Reverts made from
// the review are recorded in the same range, so the review, computed
// again from the undo log and the disk after each one, no longer shows
// what they put back.
type reviewState struct {
	all  bool
	turn int
}

// revertMarker starts the revert note appended to a user message.
const revertMarker = "\n\n[user reverted: "

// userText is a user message without the revert note Fido appended.
func userText(content string) string {
	if i := strings.Index(content, revertMarker); i >= 0 {
		return content[:i]
	}
	return content
}
