// Package permission decides whether a shell command line may run without
// asking the user, from rules the user gave ("allow go test", "deny git
// push", or a script rule for one exact command line).
//
// A command line is parsed with a real shell parser (mvdan.cc/sh/v3/syntax),
// never split on spaces, and the decision fails closed: it runs unasked only
// when it runs at least one command, every simple command in it — through
// pipes, &&, ||, ;, subshells, command and process substitutions, functions,
// loops — matches an allow rule, no deny rule may match any of them, and
// nothing in it can run code or write that the rules do not name. Asked
// always: what bash evaluates as code (arithmetic that reads variables,
// array subscripts, ${!x}, ${x@P}, namerefs; evaluate.go, decide.go), what
// the parser cannot decide statically (eval, source, a computed command
// name, a shell reading commands from -c or its input, env -S, privilege
// escalation), setting a variable that changes what later commands run
// (dangerousVariable), writes outside the workspace or into .git, and the
// options of common tools that run programs or write outside the workspace
// unless the rule names them (the escape table, escapes.go and
// escapes_table.go: it is what stands between a rule and an escape). Every
// command needs a rule, builtins such as cd and echo included. A deny rule
// refuses at once.
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
// For the OS sandbox (tools/shell) a Decision also says what each reason
// is about (Concern; SandboxHarmless and ReadOnlyHarmless for the auto
// mode), what the line will probably need or destroy (Cautions: network,
// .git writes, deletions), and the widening its allow rules give it: an
// allow rule may carry one after "with" (`allow git push with network,
// read ~/.ssh`), applied only when every command of the line is covered.
//
// It imports the workspace's state-file helpers and confined, nothing else
// of Fido's; the tool contract does not import it.
package permission
