package toolstest

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// RequireProcFS skips t where there is no Linux /proc to read processes from.
func RequireProcFS(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
}

// procStat is the state letter and the parent pid of pid (Linux /proc);
// ok is false when the process does not exist.
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid, true
}

// Alive reports whether pid runs: it exists and is not a zombie.
func Alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// Children counts the live processes whose parent is pid.
func Children(t testing.TB, pid int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	n := 0
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, ok := procStat(child); ok && ppid == pid && state != "Z" && state != "X" {
			n++
		}
	}
	return n
}
