package shell

// GuardCommand is the fido subcommand that runs one long-lived helper
// process (an MCP server) under a guard: `fido mcp-guard <host pid> --
// <program> [args…]`. The composition root answers it with RunGuard.
//
// Why a guard: the host ends a server's process group when it closes it,
// but a host killed with SIGKILL runs no code at all, and the kernel's
// parent-death signal (PR_SET_PDEATHSIG) reaches only the direct child, not
// the processes that child forked. The guard is that direct child: it is
// told when the host dies (the parent-death signal, and a check of its
// parent every second where that signal does not exist), it is the child
// subreaper of everything below it, and on the host's death, on SIGTERM or
// when the server exits it ends the whole tree — the server's process
// group and every descendant, including those that left the group.
const GuardCommand = "mcp-guard"
