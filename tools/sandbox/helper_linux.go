//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
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
	// The job: where and with what environment the command runs, how
	// many descriptors came with the message (stdin, stdout, stderr), and
	// the process attributes the caller asked for (the spare helper was
	// started before they were known).
	Dir   string   `json:"dir,omitempty"`
	Env   []string `json:"env,omitempty"`
	Stdio int      `json:"stdio,omitempty"`
	// Ruleset: the Landlock ruleset the host built came after the stdio
	// descriptors (Rules then holds only ROMounts).
	Ruleset   bool `json:"ruleset,omitempty"`
	Setsid    bool `json:"setsid,omitempty"`
	Setpgid   bool `json:"setpgid,omitempty"`
	Pdeathsig int  `json:"pdeathsig,omitempty"`
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

// RunHelper is `fido sandbox-exec`: it waits on fd 3 for its job (a spare
// helper is started before the command is known), takes the command's
// stdio, directory, environment and process attributes from it, restricts
// itself on one locked OS thread (read-only bind mounts in
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
	if err := takeJob(&w); err != nil {
		return fail(false, err)
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
	if err := applyLandlock(&w, rulesetFD); err != nil {
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
	err = syscall.Exec(path, w.Argv, w.Env)
	fmt.Fprintf(os.Stderr, "fido sandbox-exec: %s: %v\n", path, err)
	return 126
}

// jobFDs are the descriptors that came with the job (stdin, stdout,
// stderr); rulesetFD is the Landlock ruleset the host built (-1: none).
var (
	jobFDs    []int
	rulesetFD = -1
)

func readWire(w *wire) error {
	if _, err := unix.FcntlInt(helperFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return err
	}
	buf := make([]byte, 4<<20)
	oob := make([]byte, unix.CmsgSpace(3*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(helperFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("empty policy")
	}
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return err
		}
		for i := range msgs {
			fds, err := unix.ParseUnixRights(&msgs[i])
			if err != nil {
				return err
			}
			jobFDs = append(jobFDs, fds...)
		}
	}
	return json.Unmarshal(buf[:n], w)
}

// takeJob makes the job's descriptors the helper's stdin, stdout and
// stderr, moves to its directory, takes its environment (exec.LookPath
// reads PATH from it) and applies its process attributes.
func takeJob(w *wire) error {
	want := w.Stdio
	if w.Ruleset {
		want++
	}
	if len(jobFDs) != want {
		return fmt.Errorf("the job came with %d descriptors, not %d", len(jobFDs), want)
	}
	if w.Ruleset {
		rulesetFD = jobFDs[w.Stdio]
		jobFDs = jobFDs[:w.Stdio]
	}
	for i, fd := range jobFDs {
		if i > 2 {
			break
		}
		// dup3 clears close-on-exec on the copy: the command inherits it.
		if fd != i {
			if err := unix.Dup3(fd, i, 0); err != nil {
				return fmt.Errorf("stdio: %w", err)
			}
		} else if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return err
		}
	}
	for i, fd := range jobFDs {
		if fd > 2 && !containsFD(jobFDs[:i], fd) {
			unix.Close(fd)
		}
	}
	if w.Env == nil {
		w.Env = os.Environ()
	} else {
		os.Clearenv()
		for _, kv := range w.Env {
			if k, v, ok := strings.Cut(kv, "="); ok {
				os.Setenv(k, v)
			}
		}
	}
	if w.Dir != "" {
		if err := unix.Chdir(w.Dir); err != nil {
			return fmt.Errorf("chdir %s: %w", w.Dir, err)
		}
	}
	if w.Setsid {
		if _, err := unix.Setsid(); err != nil {
			return fmt.Errorf("setsid: %w", err)
		}
	} else if w.Setpgid {
		if err := unix.Setpgid(0, 0); err != nil {
			return fmt.Errorf("setpgid: %w", err)
		}
	}
	// Always set: a spare must not pass on a parent-death signal nobody asked for.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(w.Pdeathsig), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	return nil
}

func containsFD(fds []int, fd int) bool {
	for _, f := range fds {
		if f == fd {
			return true
		}
	}
	return false
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
