// Package nvim is the Neovim side of Fido's Go host: the msgpack-RPC host and
// its handlers, the front end for the agent core (agent.Screen,
// tools.Prompter, agent.EditorSurface), pure layout math, and the test
// harnesses: a headless Neovim (nvimtest) and the real TUI in tmux
// (tuitest).
//
// The renderer (UI) keeps its state per surface: the Transcript (the
// buffer's lines and what changed since the last flush), statusSurface
// (status() and the statusline), planSurface (the plan float and
// status().plan), activitySurface (the subagent bar) and inputRequests
// (a draft to restore, /quit). One mutex guards them; each surface puts
// its changed part into the next Batch. The flusher sends that batch as
// one ExecLua call, one in flight and at most one per FlushInterval; while
// a model streams, the deltas' own wakeups carry the flushes (a trailing
// timer only catches the last change). The host reads the RPC stream
// through the runtime's poller (RPCStdin), so a quiet Neovim costs no
// thread parked in a read.
package nvim
