// Package tools owns everything a model can call in the workspace: the tool
// registry (stable order, frozen schemas), the invocation context (identity
// and delegation depth) with its guard, the workspace sandbox, gitignore-aware
// walking, globbing, line handling, every workspace tool, the undo log, the
// user-facing tools (ask_an_expert) and the Tavily web tools (websearch,
// browse_url).
// It imports nothing else of Fido's but its subpackages; confined (files
// opened, read and written only inside one directory tree, never blocking)
// is what the sandbox, the walker and the state files build on.
package tools
