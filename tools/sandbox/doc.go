// Package sandbox runs one command with less authority than Fido has: on
// Linux a re-executed helper (`fido sandbox-exec`, RunHelper) applies
// no_new_privs, Landlock, an empty capability set and a seccomp filter to
// itself and then execve's the command, while a supervisor in the host
// names every refused operation and decides connect(2); on macOS the
// command runs under a generated Seatbelt profile; elsewhere Command says
// it cannot sandbox.
//
// The contract for callers (bash_exec, subagents, MCP servers):
//
//   - Probe reports what the machine enforces (Landlock ABI, seccomp,
//     no_new_privs, mount namespaces, bubblewrap) and why not; when
//     Support.Enforced is false, Command returns an error wrapping
//     ErrUnavailable and nothing may run as if it were sandboxed.
//   - A Policy names the workspace, a per-conversation temp dir, extra
//     writable paths, read-only mode, network, git writes, hidden paths
//     (DefaultDeny) and allowed Unix sockets. The policy reaches the
//     helper on a private socket (fd 3), never in the environment or on
//     the command line, so the command cannot read it back or change it.
//   - Command(ctx, policy, argv...) returns a Cmd wrapping exec.Cmd; after
//     Wait, Report lists what was refused (operation, path or host:port,
//     and the rule), for the tool result.
//   - Speed (spare_linux.go, rulecache_linux.go): a spare helper started
//     ahead of time receives each command's whole job (argv, directory,
//     environment, session and stdio descriptors) on its socket; the
//     compiled rules and a Landlock ruleset built in the host (building one
//     restricts nobody) are reused while the directories they were listed
//     from are unchanged. Prewarm starts the first spare.
//
// How the Linux layers divide the work: Landlock (compile in
// rules_linux.go) makes everything readable except the hidden paths
// (Landlock only grants, so the readable roots are enumerated around
// them) and writable only in the workspace, the temp dir and Writable;
// the workspace's .git is bind-mounted read-only in a private mount
// namespace where user namespaces work, or left out of the grants where
// they do not. Landlock ABI 6 scoping stops signals to and abstract-socket
// connections with processes outside the sandbox, and Landlock's ptrace
// rule keeps other processes' /proc/<pid>/environ and memory closed. The
// seccomp filter refuses inet sockets (or, with ABI 4, all but TCP, whose
// connect and bind Landlock refuses), io_uring, the keyrings and TIOCSTI,
// and sends the file and socket calls to the supervisor, which observes
// file calls (the kernel decides) and decides connect itself, since
// Landlock cannot restrict pathname Unix sockets such as docker.sock or
// the Neovim server.
package sandbox
