package shell

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	prSetDumpable       = 4
	prSetChildSubreaper = 36
)

// BecomeSubreaper makes this process the child subreaper of everything it
// starts (PR_SET_CHILD_SUBREAPER): a process that leaves a bash_exec command
// with setsid or a double fork is re-parented to the host instead of init,
// so the host can still find and end it.
func BecomeSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}

// ProtectProcess marks the process non-dumpable (PR_SET_DUMPABLE 0): its
// /proc/<pid>/environ, mem and similar files become unreadable to other
// processes of the same user (bash_exec commands included) and it cannot
// be ptrace-attached without privileges.
func ProtectProcess() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); e != 0 {
		return e
	}
	return nil
}

type procEntry struct {
	pid, ppid, pgid, sid int
	zombie               bool
}

// readProcs lists the system's processes from /proc.
func readProcs() []procEntry {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procEntry, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 4 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		sid, _ := strconv.Atoi(f[3])
		out = append(out, procEntry{pid: pid, ppid: ppid, pgid: pgid, sid: sid, zombie: f[0] == "Z" || f[0] == "X"})
	}
	return out
}

// killStrays ends what bash_exec commands left behind: every process still
// in one of the sessions ended (it left the process group, not the
// session), and every child of the host outside the host's own session that
// no running command owns (it escaped with setsid and came back to the host,
// its subreaper) together with its descendants. Zombies among such children
// are reaped. It repeats until nothing is left (a killed process's children
// come back to the host too), for at most within. It returns the number of
// processes killed.
func killStrays(ended map[int]bool, within time.Duration) int {
	me := os.Getpid()
	killed := map[int]bool{}
	deadline := time.Now().Add(within)
	for {
		procs := readProcs()
		mySid := -1
		for _, p := range procs {
			if p.pid == me {
				mySid = p.sid
			}
		}
		live := liveSessions()
		for sid := range ended {
			delete(live, sid)
		}
		stray := func(p procEntry) bool {
			return p.ppid == me && p.sid != mySid && !live[p.sid]
		}
		children := map[int][]int{}
		zombie := map[int]bool{}
		for _, p := range procs {
			children[p.ppid] = append(children[p.ppid], p.pid)
			zombie[p.pid] = p.zombie
		}
		var targets []int
		var add func(pid int)
		add = func(pid int) {
			if !zombie[pid] {
				targets = append(targets, pid)
			}
			for _, c := range children[pid] {
				add(c)
			}
		}
		for _, p := range procs {
			switch {
			case p.pid == me:
			case p.zombie:
				if stray(p) || (p.ppid == me && ended[p.sid]) {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
				}
			case ended[p.sid]:
				targets = append(targets, p.pid)
			case stray(p):
				add(p.pid)
			}
		}
		if len(targets) == 0 {
			break
		}
		for _, pid := range targets {
			if pid == me || pid <= 1 {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return len(killed)
}

// killSessionTrees sends SIGKILL to every live process in one of sessions
// and to every descendant of such a process, wherever it went (setsid,
// setpgid), from one snapshot of /proc taken before anything dies: killing
// first would turn the members into zombies and re-parent the escaped ones
// before they could be told apart. It returns the number of processes it
// killed.
func killSessionTrees(sessions map[int]bool) int {
	if len(sessions) == 0 {
		return 0
	}
	targets := treeOf(readProcs(), func(p procEntry) bool { return sessions[p.sid] })
	n := 0
	for _, pid := range targets {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// treeOf lists the live processes that match root and all their
// descendants (this process and init never), from one snapshot.
func treeOf(procs []procEntry, root func(procEntry) bool) []int {
	me := os.Getpid()
	children := map[int][]procEntry{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	seen := map[int]bool{}
	var targets []int
	var add func(p procEntry)
	add = func(p procEntry) {
		if seen[p.pid] || p.pid == me || p.pid <= 1 {
			return
		}
		seen[p.pid] = true
		if !p.zombie {
			targets = append(targets, p.pid)
		}
		for _, c := range children[p.pid] {
			add(c)
		}
	}
	for _, p := range procs {
		if root(p) {
			add(p)
		}
	}
	return targets
}

// endOwnTree ends, with SIGKILL, every process below this one (it is their
// child subreaper, so even those that escaped with setsid or a double fork
// are still below it) and every other member of its process group, and
// reaps them. It repeats until nothing is left (a killed process's children
// come back to this one), for at most within, and returns the number killed.
func endOwnTree(within time.Duration) int {
	me := os.Getpid()
	pgid := syscall.Getpgrp()
	killed := map[int]bool{}
	deadline := time.Now().Add(within)
	for {
		procs := readProcs()
		targets := treeOf(procs, func(p procEntry) bool { return p.ppid == me || (p.pgid == pgid && pgid != 1) })
		for _, pid := range targets {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		reapChildren()
		if len(targets) == 0 || time.Now().After(deadline) {
			return len(killed)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reapChildren collects every child of this process that has exited.
func reapChildren() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// parentGoneSignal is what a guard asks the kernel to send it when the
// thread that started it ends (PR_SET_PDEATHSIG): the guard then checks
// whether the host itself is gone.
func setParentGoneSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGUSR1 }

// reapExitedExcept collects the exited children of this process other than
// pid (re-parented orphans that died), leaving pid to its own Wait.
func reapExitedExcept(pid int) {
	me := os.Getpid()
	for _, p := range readProcs() {
		if p.ppid == me && p.zombie && p.pid != pid {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}
