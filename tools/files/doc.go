// Package files holds the workspace tools: list_files, find_files,
// read_file and ripgrep (read-only, so subagents may use them), and patch,
// mkdir, rm and rmdir (mutating: they refuse files changed since the model
// read them, never overwrite a buffer with unsaved changes, pass the
// conversation's review gate when /edits review is on, and record every
// change in the undo log before making it). Tools returns all eight bound
// to one workspace; ListRoot is the short root listing of the system prompt.
//
// With them live the mechanisms only they use: the gitignore-aware
// parallel walker (walk.go, ignore.go), the regular-expression search
// engine (search.go with its line DFA, linedfa.go; Search and Find are
// also what the tool benchmark measures against rg and fd) and the edit
// review of patch, rm and rmdir (review.go).
//
// It imports the tool contract (tools), the workspace (sandbox, undo log,
// read-before-write checks) and confined, nothing else of Fido's. Only the
// composition root imports it; the agent core reaches files through the
// workspace, never through these tools.
package files
