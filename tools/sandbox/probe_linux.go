//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe reports what this machine enforces, using this executable as the
// helper. It is measured once per process.
func Probe() Support {
	exe, err := os.Executable()
	if err != nil {
		return Support{Reason: "cannot find the helper executable: " + err.Error()}
	}
	return probeWith(exe)
}

var probes sync.Map // helper path → *probeOnce

type probeOnce struct {
	once sync.Once
	s    Support
}

func probeWith(helper string) Support {
	v, _ := probes.LoadOrStore(helper, &probeOnce{})
	p := v.(*probeOnce)
	p.once.Do(func() { p.s = measure(helper) })
	return p.s
}

func measure(helper string) Support {
	s := Support{Mechanism: "landlock", LandlockABI: landlockABI(), NoNewPrivs: true}
	s.Seccomp = seccompNotifyAvailable()
	s.Bwrap = bwrapState()
	switch {
	case s.LandlockABI < 1:
		s.Reason = "Landlock is not available (Linux 5.13 or newer with Landlock enabled at boot, lsm=landlock)"
		if os.Getenv(simulateABI0Env) == "1" {
			s.Reason += "; simulated by " + simulateABI0Env
		}
	case !s.Seccomp:
		s.Reason = "seccomp user notifications are not available"
	default:
		s.Enforced = true
	}
	if s.Enforced {
		s.MountNS, s.MountNSReason = mountNSWorks(helper)
	}
	return s
}

func seccompNotifyAvailable() bool {
	action := uint32(retUserNotif)
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return e == 0
}

// mountNSWorks runs the helper in a new user and mount namespace and has
// it bind a directory read-only: AppArmor's user-namespace restriction
// (Ubuntu 24.04) lets the namespace be created but not the mount.
func mountNSWorks(helper string) (bool, string) {
	dir, err := os.MkdirTemp("", "fido-sandbox-probe-")
	if err != nil {
		return false, err.Error()
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := &Cmd{mountNS: true, helper: helper, ctx: ctx, rulesetFD: -1}
	c.w = wire{Probe: true, MountNS: true, Rules: &ruleSet{ROMounts: []string{dir}}}
	c.Cmd = exec.Command(helper, HelperCommand)
	var stderr strings.Builder
	c.Stderr = &stderr
	err = c.Start()
	if err == nil {
		err = c.Wait()
	}
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = ee.String()
		}
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EINVAL) {
			msg = "unprivileged user namespaces are disabled: " + msg
		}
		if e := strings.TrimSpace(stderr.String()); e != "" {
			msg += ": " + e
		}
		return false, strings.TrimPrefix(msg, "sandbox: ")
	}
	return true, ""
}

// bwrapState says whether bubblewrap could run here.
func bwrapState() string {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--unshare-user", "true").CombinedOutput()
	if err != nil {
		return "installed but unusable: " + strings.TrimSpace(string(out)+" "+err.Error())
	}
	return "usable (" + path + ")"
}
