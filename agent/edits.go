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

// editGate is the session's tools.EditGate. Approvals run one at a time:
// the preview and the picker of the next change wait until the user
// answered the previous one.
type editGate struct {
	s  *Session
	mu sync.Mutex
}

// Reviewing reports whether changes must be approved now: review mode, and
// the user did not choose "Apply all this turn".
func (g *editGate) Reviewing() bool {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	return g.s.edits == EditsReview && !g.s.applyAll && g.s.mode != ModeAutoEdit
}

// Approve shows the change and asks. Dismissing the picker rejects.
func (g *editGate) Approve(ctx context.Context, p tools.EditProposal) (tools.EditDecision, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.Reviewing() {
		return tools.EditDecision{Apply: true}, nil
	}
	ui := g.s.ui
	diff := workspace.UnifiedDiff(p.Files)
	if p.Note != "" {
		diff = "# " + p.Note + "\n" + diff
	}
	title := p.Tool + " " + p.Summary
	idx, err := askEdit(ctx, ui, title, editPrompt(p), diff)
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
		g.s.mu.Lock()
		g.s.applyAll = true
		g.s.mu.Unlock()
		return tools.EditDecision{Apply: true}, nil
	case EditRejectReason:
		reason, ok, err := ui.Input(ctx, "Why reject this change? ", "")
		if err != nil {
			return tools.EditDecision{}, err
		}
		if ok {
			return tools.EditDecision{Reason: strings.TrimSpace(reason)}, nil
		}
	}
	return tools.EditDecision{}, nil
}

// askEdit asks the review question. A UI that shows a question's detail
// gets the diff as one (whole, scrollable, beside the choices); others
// show it with ShowEdit while the picker asks.
func askEdit(ctx context.Context, ui UI, title, prompt, diff string) (int, error) {
	if a, ok := ui.(tools.Asker); ok {
		return a.Ask(ctx, tools.Question{
			Prompt:         prompt,
			Items:          EditChoices,
			Safe:           0,
			Approval:       true,
			Detail:         diff,
			DetailFiletype: "diff",
			DetailInfo:     []string{title},
		})
	}
	ui.ShowEdit(title, diff)
	defer ui.ShowEdit("", "")
	return ui.Select(ctx, prompt, EditChoices)
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

// setEdits handles /edits [auto|review].
func (s *Session) setEdits(arg string) {
	switch arg {
	case "":
		s.mu.Lock()
		mode := s.edits
		s.mu.Unlock()
		s.ui.Notice("edits: " + mode + " (/edits auto applies Fido's file changes at once, /edits review asks first)")
		return
	case EditsAuto, EditsReview:
	default:
		s.ui.Error(fmt.Sprintf("/edits: unknown mode %q (use /edits auto or /edits review)", arg))
		return
	}
	s.mu.Lock()
	s.edits = arg
	info := s.info()
	s.mu.Unlock()
	s.ui.Info(info)
	if arg == EditsReview {
		s.ui.Notice("edits: review — every patch, rm and rmdir is shown and waits for your approval")
	} else {
		s.ui.Notice("edits: auto — Fido's file changes apply at once (:FidoReview shows them afterwards)")
	}
}
