package shell

import (
	"sync"
	"time"
)

// The sessions of the bash_exec commands running now, by the session id
// (the pid of their bash). Strays are judged against it: a process of a
// running command is never a stray.
var bashSessions = struct {
	sync.Mutex
	live map[int]bool
}{live: map[int]bool{}}

func trackSession(sid int) {
	bashSessions.Lock()
	bashSessions.live[sid] = true
	bashSessions.Unlock()
}

func untrackSession(sid int) {
	bashSessions.Lock()
	delete(bashSessions.live, sid)
	bashSessions.Unlock()
}

// OwnSession registers a child the host started in a session of its own
// (Setsid) for another purpose than bash_exec — a language or MCP server —
// so that the stray sweep (which kills the host's children outside its own
// session that no running command owns) leaves it alone. Call release when
// it has exited. Children in the host's session need nothing.
func OwnSession(sid int) (release func()) {
	trackSession(sid)
	return func() { untrackSession(sid) }
}

func liveSessions() map[int]bool {
	bashSessions.Lock()
	defer bashSessions.Unlock()
	out := make(map[int]bool, len(bashSessions.live))
	for k := range bashSessions.live {
		out[k] = true
	}
	return out
}

// KillProcesses ends, at once (SIGKILL), every process the host's bash_exec
// commands started that still runs: their process groups, their sessions,
// and processes that escaped both (setsid, a daemon's double fork) — found
// as descendants of a session's processes before the kill, or later as the
// host's children when it is their subreaper. Sessions registered with
// OwnSession are included. The host calls it when it exits: nothing it
// started outlives it. It returns the number of processes killed.
func KillProcesses() int {
	all := liveSessions()
	killed := killSessionTrees(all)
	for sid := range all {
		killGroupNow(sid)
	}
	return killed + killStrays(all, 500*time.Millisecond)
}
