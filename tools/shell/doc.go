// Package shell is the bash_exec tool and the process care it needs: a
// command runs only after the permission rules or the user approved it,
// in bash in a session and process group of its own in the workspace root,
// with a time limit, Fido's keys removed from its environment and its
// output capped to a head and a tail. When a command ends (or times out,
// or is cancelled) its whole process tree goes with it, including
// processes that escaped its session; when the host exits, KillProcesses
// ends whatever any command left running. BecomeSubreaper and
// ProtectProcess harden the host process itself (cmd/fido calls them).
// Guarded and RunGuard (`fido mcp-guard`) run a long-lived helper (an MCP
// server) under a guard process that ends the helper's whole tree when the
// helper exits, when asked, and when the host dies, even by SIGKILL.
//
// Where the machine enforces one, every command runs in the OS sandbox
// of tools/sandbox (sandboxed.go): the policy comes from the user's mode
// (off, ask, auto), rules and answers, never from the model; refusals are
// named in the result and the user may approve one wider run (the
// widenings of tools/permission rules); subagents and plan mode run
// commands in a read-only sandbox. GuardedSandbox has the guard run a
// server in the sandbox, staying outside it as its supervisor.
//
// Running commands needs a Unix system: bash_exec_unix.go and procs_linux.go
// hold the mechanics, and on other systems (bash_exec_other.go,
// procs_other.go) the tool stays advertised and answers that it is not
// supported there, so the host builds everywhere Go does.
//
// It imports the tool contract (tools), the workspace, the permission rules
// and store (tools/permission), the sandbox and secret; only the
// composition root and tools/mcp (the guard) import it.
package shell
