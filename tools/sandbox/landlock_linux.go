//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's system calls are made directly: the helper restricts only
// the one thread that then calls execve, so it needs none of the
// all-threads machinery a library brings (go-landlock links libcap's psx,
// which under cgo wraps pthread_create for the whole host binary).

const (
	llNetBindTCP    = unix.LANDLOCK_ACCESS_NET_BIND_TCP
	llNetConnectTCP = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP

	llScopeAbstractUnix = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	llScopeSignal       = unix.LANDLOCK_SCOPE_SIGNAL
)

// simulateABI0Env, set to 1, makes Probe and the helper behave as on a
// kernel without Landlock. Test-only: it can only take the sandbox away,
// so Command refuses and the helper runs nothing; the model cannot set a
// host environment variable (bash_exec takes only a command and a timeout).
const simulateABI0Env = "FIDO_SANDBOX_TEST_NO_LANDLOCK"

// landlockABI is the running kernel's Landlock ABI version, 0 without
// Landlock. ABI 6's signal scoping had a bug fixed as erratum 2: without
// the fix the scoping is not trusted and ABI 5 is reported.
func landlockABI() int {
	if os.Getenv(simulateABI0Env) == "1" {
		return 0
	}
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 || int(v) < 1 {
		return 0
	}
	abi := int(v)
	if abi >= 6 {
		errata, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
		if e != 0 || errata&2 == 0 {
			abi = 5
		}
	}
	return abi
}

type llPathBeneath struct {
	allowed uint64
	fd      int32
}

// applyLandlock restricts the calling thread (and what it executes) to
// w's rules, with the ruleset the host built (rulesetFD ≥ 0) or one built
// here. Only fully enforced rule sets pass: a path that cannot be added
// fails the whole restriction.
func applyLandlock(w *wire, rulesetFD int) error {
	fd := rulesetFD
	if fd < 0 {
		attr := unix.LandlockRulesetAttr{Access_fs: w.Rules.Handled, Access_net: w.HandledNet, Scoped: w.Scoped}
		r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
		if e != 0 {
			return fmt.Errorf("landlock_create_ruleset: %w", e)
		}
		fd = int(r)
		if err := addRules(fd, w.Rules.Rules); err != nil {
			unix.Close(fd)
			return err
		}
	}
	defer unix.Close(fd)
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}

// noNewPrivs sets no_new_privs: setuid and file-capability binaries run
// without gaining anything.
func noNewPrivs() error {
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective sets, so a command run by root (or by the helper inside its
// user namespace) holds no capability and cannot get one back by execve.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		// EPERM without CAP_SETPCAP: such a process has nothing to drop.
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
