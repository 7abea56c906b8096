// Package mcp is Fido's Model Context Protocol client, built on the official
// Go SDK (github.com/modelcontextprotocol/go-sdk). It owns the server
// configuration (setup() options, the user's mcp.json, the project's
// .mcp.json behind a trust answer bound to each entry as the user saw it),
// the connections (stdio servers under the guard of tools/shell, so their
// whole process tree ends with Fido; streamable HTTP; started in parallel,
// restarted after a crash and at /mcp reload),
// the catalog snapshot a conversation fixes at its first request, and the
// adapter that turns each server tool into a tools.Tool: stable name and
// spec bytes, an approval before every call, the read-only guard for
// subagents, bounded results.
//
// A stdio server runs in the OS sandbox (its guard applies it) when its
// entry says "sandbox", or by default for project servers trusted from now
// on (sandbox.go); the trust record remembers which.
//
// It imports the tool contract (tools), the workspace (its state files),
// confined (reading them), the permission rules (MCPRule), shell (the
// process guard) and sandbox (the policy type), nothing else of Fido's; only the composition root imports
// it.
package mcp
