package tools

import "context"

// EditGate approves file changes before a mutating tool makes them: the
// conversation's review mode (/edits review) implements it by showing the
// change and asking the user. Tools call Reviewing first, so nothing is
// computed for review when changes apply at once.
type EditGate interface {
	// Reviewing reports whether this change must be approved first.
	Reviewing() bool
	// Approve shows what the call would do and waits for the user's decision.
	// It returns an error only when the user could not be asked (ctx ended
	// included); nothing may be written then.
	Approve(ctx context.Context, p EditProposal) (EditDecision, error)
}

// EditProposal is what a patch, rm or rmdir call would do.
type EditProposal struct {
	Tool string // patch, rm or rmdir
	// Summary is the call in one line (the transcript's).
	Summary string
	Files   []FileChange
	// Note says what the preview cannot show, e.g. an operation that would fail.
	Note string
}

// FileChange is one file's content before and after a proposed change.
type FileChange struct {
	Path    string // workspace-relative
	Existed bool   // the file exists now
	Exists  bool   // and will exist after the change
	Before  []byte
	After   []byte
	// Note replaces the content when it cannot be shown (binary, too large).
	Note string
}

// EditDecision is the user's answer.
type EditDecision struct {
	Apply bool
	// Reason is the user's reason for a rejection ("" when none was given).
	Reason string
}
