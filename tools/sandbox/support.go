package sandbox

import (
	"fmt"
	"strings"
)

// Support is what this machine enforces, for :checkhealth, the statusline
// and the decision to sandbox at all. Probe measures it once per process.
type Support struct {
	// Enforced is true when Command can run a command sandboxed. When
	// false, Reason says why and the caller must ask before every
	// command, as without a sandbox.
	Enforced bool
	Reason   string
	// Mechanism is "landlock" (Linux), "seatbelt" (macOS) or "".
	Mechanism string
	// LandlockABI is the kernel's Landlock ABI version (0: none). From 4
	// Landlock also refuses TCP connect and bind, from 6 signals to and
	// abstract sockets of processes outside the sandbox.
	LandlockABI int
	// Seccomp: the seccomp filter and its user notifications are
	// available (the filter refuses sockets; the notifications name what
	// was refused and decide connect).
	Seccomp bool
	// NoNewPrivs: setuid binaries gain nothing in the sandbox.
	NoNewPrivs bool
	// MountNS: unprivileged user and mount namespaces work, so the
	// workspace's .git can be made read-only while the rest of the
	// workspace stays writable. Without them the workspace's top level is
	// read-only while .git is protected. MountNSReason says why not.
	MountNS       bool
	MountNSReason string
	// Bwrap says whether bubblewrap is installed and usable; it is not
	// used as a layer (the helper needs none of what it adds here).
	Bwrap string
}

// Summary is one line for a notice or :checkhealth.
func (s Support) Summary() string {
	if !s.Enforced {
		return "commands are not sandboxed: " + s.Reason
	}
	if s.Mechanism == "seatbelt" {
		return "commands run sandboxed (macOS Seatbelt)"
	}
	parts := []string{fmt.Sprintf("Landlock ABI %d", s.LandlockABI), "seccomp", "no_new_privs"}
	if s.LandlockABI >= 4 {
		parts = append(parts, "TCP restricted")
	}
	if s.LandlockABI >= 6 {
		parts = append(parts, "signals and abstract sockets scoped")
	}
	if s.MountNS {
		parts = append(parts, "read-only .git mount")
	} else {
		parts = append(parts, "no mount namespace ("+s.MountNSReason+")")
	}
	return "commands run sandboxed: " + strings.Join(parts, ", ")
}
