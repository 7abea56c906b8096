//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// helperFD is where the helper finds its end of the policy socket.
const helperFD = 3

// wire is what the host sends the helper on the policy socket.
type wire struct {
	Argv       []string   `json:"argv"`
	Rules      *ruleSet   `json:"rules"`
	HandledNet uint64     `json:"handled_net,omitempty"`
	Scoped     uint64     `json:"scoped,omitempty"`
	Filter     filterSpec `json:"filter"`
	MountNS    bool       `json:"mount_ns,omitempty"`
	// Probe: set up the mount namespace, answer, and exit.
	Probe bool `json:"probe,omitempty"`
}

// reply is the helper's answer: ready (with the supervisor's listener
// attached) or why nothing will run.
type reply struct {
	OK          bool   `json:"ok"`
	Err         string `json:"err,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
	// Named is false when no supervisor could be attached (nested sandbox).
	Named bool `json:"named,omitempty"`
}

// RunHelper is `fido sandbox-exec`: it reads the policy the host sent on
// fd 3, restricts itself on one locked OS thread (read-only bind mounts in
// its own mount namespace where the host asked for them, no_new_privs,
// Landlock, no capabilities, the seccomp filter whose listener it hands
// back to the host), then execve's the command on that same thread, so
// the command starts with every restriction and the host never had any.
// It returns an exit code only when nothing was run.
func RunHelper(args []string) int {
	runtime.LockOSThread()
	var w wire
	if err := readWire(&w); err != nil {
		fmt.Fprintln(os.Stderr, "fido sandbox-exec: started without a policy; Fido runs this itself:", err)
		return 125
	}
	fail := func(unavailable bool, err error) int {
		_ = sendReply(reply{Err: err.Error(), Unavailable: unavailable}, -1)
		fmt.Fprintln(os.Stderr, "fido sandbox-exec:", err, "- nothing was run")
		return 125
	}
	if landlockABI() < 1 {
		return fail(true, errors.New("this kernel has no Landlock"))
	}
	if w.MountNS {
		if err := mountReadOnly(w.Rules.ROMounts); err != nil {
			return fail(false, fmt.Errorf("read-only mounts: %w", err))
		}
	}
	if w.Probe {
		_ = sendReply(reply{OK: true}, -1)
		return 0
	}
	if len(w.Argv) == 0 {
		return fail(false, errors.New("no command"))
	}
	path, err := exec.LookPath(w.Argv[0])
	if err != nil {
		return fail(false, err)
	}
	if err := noNewPrivs(); err != nil {
		return fail(true, fmt.Errorf("no_new_privs: %w", err))
	}
	if err := applyLandlock(&w); err != nil {
		return fail(true, err)
	}
	if err := dropCapabilities(); err != nil {
		return fail(false, err)
	}
	named := w.Filter.Notify
	listener, err := loadFilter(w.Filter)
	if errors.Is(err, errNestedListener) {
		w.Filter.Notify, named = false, false
		listener, err = loadFilter(w.Filter)
	}
	if err != nil {
		return fail(true, err)
	}
	if err := sendReply(reply{OK: true, Named: named}, listener); err != nil {
		fmt.Fprintln(os.Stderr, "fido sandbox-exec: the host is gone:", err)
		return 125
	}
	if listener >= 0 {
		unix.Close(listener)
	}
	unix.Close(helperFD)
	err = syscall.Exec(path, w.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "fido sandbox-exec: %s: %v\n", path, err)
	return 126
}

func readWire(w *wire) error {
	if _, err := unix.FcntlInt(helperFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return err
	}
	buf := make([]byte, 4<<20)
	n, _, _, _, err := unix.Recvmsg(helperFD, buf, nil, 0)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("empty policy")
	}
	return json.Unmarshal(buf[:n], w)
}

// sendReply answers the host, passing fd (if ≥ 0) with it.
func sendReply(r reply, fd int) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	return unix.Sendmsg(helperFD, b, oob, nil, 0)
}

// mountReadOnly makes paths read-only in the helper's own mount namespace
// (started by the host with a user namespace): mount events stay private,
// and each path is bind-mounted onto itself and remounted read-only,
// keeping the flags the kernel locks for an unprivileged namespace.
func mountReadOnly(paths []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for _, p := range paths {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			return err
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for _, f := range []struct{ st, ms int64 }{
			{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
			{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
		} {
			if st.Flags&f.st != 0 {
				flags |= uintptr(f.ms)
			}
		}
		if err := unix.Mount("", p, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", p, err)
		}
	}
	return nil
}
