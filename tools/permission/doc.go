// Package permission decides whether a shell command line may run without
// asking the user, from rules the user gave ("allow go test", "deny git
// push").
//
// A command line is parsed with a real shell parser (mvdan.cc/sh/v3/syntax),
// never split on spaces: it runs unasked only when every simple command in
// it — through pipes, &&, ||, ;, subshells, command and process
// substitutions, functions, loops — matches an allow rule, no deny rule may
// match any of them, and no redirection writes outside the workspace.
// Whatever the parser cannot decide statically (eval, source, a command name
// built from an expansion, a shell reading commands from -c or standard
// input, privilege escalation) always asks, and so does a write into .git.
// Every command needs a rule, builtins such as cd and echo included. A deny
// rule refuses at once.
//
// The engine (Checker, Decide) is pure: it reads no files and starts
// nothing. Store keeps the rules it decides with: the user's from setup(),
// the workspace's (a file in the state directory, re-read only after it
// changed and rewritten atomically under the state lock, so two Neovims on
// one workspace never lose each other's rules) and this session's. The same
// rules decide javascript_execute's network access (JSNetworkRule) and MCP
// tools (MCPRule). Asking the user belongs to the callers (bash_exec,
// javascript_execute, the MCP manager).
//
// It imports the workspace's state-file helpers and confined, nothing else
// of Fido's; the tool contract does not import it.
package permission
