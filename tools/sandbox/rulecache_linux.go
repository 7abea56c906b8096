//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The compiled rules of a policy, and the Landlock ruleset built from
// them, are kept between commands: listing the readable roots around the
// hidden paths and adding a Landlock rule for each (a few hundred on a
// typical system) cost more than a millisecond a command. The host builds
// the ruleset (building one restricts nobody; only landlock_restrict_self
// does) and hands the helper a descriptor of it, and both are used again
// while none of the directories they were computed from changed (their
// stamps, rules_linux.go) — so a new file in a listed directory, or a
// hidden path that appears, is seen by the next command as before.

// cacheSettle is how old a watched directory's last change must be for
// its compiled rules to be kept: a change within the same timestamp tick
// as the listing could otherwise go unnoticed.
const cacheSettle = 100 * time.Millisecond

// cacheSize bounds the policies kept (a workspace-write one, a read-only
// one and a few widened ones per conversation).
const cacheSize = 8

type compiled struct {
	rules   *ruleSet
	ruleset int // Landlock ruleset fd, owned by the cache
	used    time.Time
}

var ruleCache = struct {
	sync.Mutex
	m map[string]*compiled
}{m: map[string]*compiled{}}

// rulesFor compiles p (or reuses the still-current compilation) and
// returns the rules and a duplicate of the ruleset descriptor for the
// helper (the caller closes it; -1 when none could be built).
func rulesFor(p Policy, abi int, mountNS bool, handledNet, scoped uint64) (*ruleSet, int, error) {
	kb, _ := json.Marshal(struct {
		P          Policy
		ABI        int
		MountNS    bool
		Net, Scope uint64
	}{p, abi, mountNS, handledNet, scoped})
	key := string(kb)
	ruleCache.Lock()
	c := ruleCache.m[key]
	ruleCache.Unlock()
	if c != nil && c.rules.current() {
		if fd, err := unix.FcntlInt(uintptr(c.ruleset), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			ruleCache.Lock()
			c.used = time.Now()
			ruleCache.Unlock()
			return c.rules, fd, nil
		}
	}
	start := time.Now()
	rules, err := compile(p, abi, mountNS)
	if err != nil {
		return nil, -1, err
	}
	fd, err := buildRuleset(rules, handledNet, scoped)
	if err != nil {
		return rules, -1, nil // the helper builds it itself and says what failed
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return rules, -1, nil
	}
	if !rules.settled(start.Add(-cacheSettle)) {
		unix.Close(fd)
		return rules, dup, nil
	}
	ruleCache.Lock()
	defer ruleCache.Unlock()
	if old := ruleCache.m[key]; old != nil {
		unix.Close(old.ruleset)
	}
	ruleCache.m[key] = &compiled{rules: rules, ruleset: fd, used: time.Now()}
	for len(ruleCache.m) > cacheSize {
		var oldest string
		for k, v := range ruleCache.m {
			if oldest == "" || v.used.Before(ruleCache.m[oldest].used) {
				oldest = k
			}
		}
		unix.Close(ruleCache.m[oldest].ruleset)
		delete(ruleCache.m, oldest)
	}
	return rules, dup, nil
}

// settled reports whether every watched directory last changed before t.
func (rs *ruleSet) settled(t time.Time) bool {
	for _, w := range rs.watch {
		if w.mtime >= t.UnixNano() || w.ctime >= t.UnixNano() {
			return false
		}
	}
	return true
}

// buildRuleset creates the Landlock ruleset for rules: a path that cannot
// be added fails it (as in the helper, only fully enforced sets pass).
func buildRuleset(rs *ruleSet, handledNet, scoped uint64) (int, error) {
	attr := unix.LandlockRulesetAttr{Access_fs: rs.Handled, Access_net: handledNet, Scoped: scoped}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	if err := addRules(int(fd), rs.Rules); err != nil {
		unix.Close(int(fd))
		return -1, err
	}
	return int(fd), nil
}

// addRules adds each path-beneath rule to the ruleset fd.
func addRules(fd int, rules []fsRule) error {
	for _, r := range rules {
		pfd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			// Gone since it was listed: nothing to grant.
			continue
		}
		access := r.Access
		var st unix.Stat_t
		if unix.Fstat(pfd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llFileRights
		}
		rule := llPathBeneath{allowed: access, fd: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		unix.Close(pfd)
		if e != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", r.Path, e)
		}
	}
	return nil
}
