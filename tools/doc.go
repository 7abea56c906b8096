// Package tools owns everything a model can call in the workspace: the tool
// registry (stable order, frozen schemas), the invocation context (identity
// and delegation depth) with its guard, the workspace sandbox, gitignore-aware
// walking, globbing, line handling, every workspace tool and the undo log.
// It imports nothing else of Fido's.
package tools
