// Package tools owns everything a model can call in the workspace: the tool
// registry (stable order, frozen schemas), the invocation context (identity
// and delegation depth) with its guard, the workspace sandbox, gitignore-aware
// walking, globbing, line handling, every workspace tool, the undo log, the
// user-facing tools (ask_an_expert) and the Tavily web tools (websearch,
// browse_url).
// It imports nothing else of Fido's but its subpackages; confined (files
// opened, read and written only inside one directory tree, never blocking)
// is what the sandbox, the walker and the state files build on.
//
// A tool's argument contract has one source (contract.go): its params struct,
// from which github.com/google/jsonschema-go generates the schema (properties
// in field order, required = fields without omitempty, descriptions from
// `jsonschema` tags), bounds given as the tool's Go constants, and its .md
// description, a text/template over the same constants. A Contract is built
// once, when the registry first lists its tool, so the catalog is the same
// bytes in every run and processes that list no tools do not pay for it;
// NewRegistry refuses a tool whose contract cannot be built. CheckContract,
// run over the real registry by cmd/fido's tests, fails when a schema, a
// description and a struct disagree.
package tools
