// Package workspace is the workspace the tools work in and Fido's state
// about it, without any tool: the Sandbox (every path resolved and every
// file opened, read and written through the root's os.Root, never outside
// it, never blocking on a FIFO or device), the Workspace that binds it to
// the editor and the undo log, the read-before-write checks against the
// conversation's tools.FileTracker (seen.go), the undo log itself
// (undo.go: one file per entry, bounded, written before each change), what
// is built on it — RevertLast (/undo), PlanRewind and ApplyRewind
// (/rewind), ChangedFiles, RevertHunk and RevertFile (:FidoReview), all
// acting only on the hunks Fido wrote, which TrackHunks follows through a
// file's history (hunks.go) — the line diff and unified diff of review
// (diff.go), and Fido's state-file
// mechanics: atomic writes (WriteFileAtomic, and WriteStateFile with the
// keys redacted), the advisory state lock two Neovims share (LockState),
// and FileStamp, a cheap has-it-changed check.
//
// It imports the tool contract (tools: Editor, FileChange, FileTracker),
// confined and secret, nothing else of Fido's and nothing outside the
// standard library; the contract does not import it. The conversation
// core (agent), the plan store and the tool packages (files, shell, js,
// lsp, permission) import it.
package workspace
