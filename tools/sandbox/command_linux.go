//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperStartTimeout bounds how long Start waits for the helper to say
// that the restrictions are in place.
const helperStartTimeout = 30 * time.Second

// Cmd is a command that runs in the sandbox. Set Stdout, Stderr, Stdin,
// Dir, Env (start from Policy.Env) and SysProcAttr fields on the embedded
// exec.Cmd as usual, but call Start, Wait and Run on Cmd itself: they hand
// the policy to the helper and supervise the command. Do not set
// ExtraFiles.
type Cmd struct {
	*exec.Cmd

	rules   *ruleSet
	w       wire
	host    *os.File // the host's end of the policy socket
	child   *os.File // the helper's end, closed after Start
	sup     *supervisor
	named   bool
	mountNS bool
	once    sync.Once
}

// Command prepares argv to run under p, with this executable as the helper
// (cmd/fido dispatches HelperCommand to RunHelper). The error wraps
// ErrUnavailable when this system cannot enforce the sandbox.
func Command(ctx context.Context, p Policy, argv ...string) (*Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot find the helper: %w", err)
	}
	return CommandWithHelper(ctx, exe, p, argv...)
}

// CommandWithHelper is Command with an explicit helper binary (a test
// binary, or bin/fido from a benchmark).
func CommandWithHelper(ctx context.Context, helper string, p Policy, argv ...string) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	sup := probeWith(helper)
	if !sup.Enforced {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, sup.Reason)
	}
	p, err := p.validate()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.TempDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: temp dir: %w", err)
	}
	rules, err := compile(p, sup.LandlockABI, sup.MountNS)
	if err != nil {
		return nil, err
	}
	c := &Cmd{rules: rules, mountNS: sup.MountNS && len(rules.ROMounts) > 0}
	c.w = wire{Argv: argv, Rules: rules, MountNS: c.mountNS}
	c.w.Scoped = scopedFor(sup.LandlockABI)
	c.w.Filter = filterSpec{Network: p.Network, Notify: true}
	if !p.Network && sup.LandlockABI >= 4 {
		// TCP sockets may be created; Landlock refuses every connect and bind.
		c.w.HandledNet = llNetBindTCP | llNetConnectTCP
		c.w.Filter.TCPSockets = true
	}
	c.Cmd = exec.CommandContext(ctx, helper, HelperCommand)
	c.Env = p.Env(os.Environ())
	return c, nil
}

// scopedFor is Landlock's IPC scoping (ABI 6): no signal to, and no
// abstract Unix socket connection with, a process outside the sandbox —
// Fido and Neovim included.
func scopedFor(abi int) uint64 {
	if abi >= 6 {
		return llScopeAbstractUnix | llScopeSignal
	}
	return 0
}

// Start starts the helper, sends it the policy and returns once the
// command runs restricted, or with an error after which nothing ran.
func (c *Cmd) Start() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: socketpair: %w", err)
	}
	c.host, c.child = os.NewFile(uintptr(fds[0]), "sandbox-host"), os.NewFile(uintptr(fds[1]), "sandbox-helper")
	defer c.child.Close()
	if err := sendWire(fds[0], &c.w); err != nil {
		c.host.Close()
		return err
	}
	c.ExtraFiles = []*os.File{c.child}
	if c.mountNS {
		if c.SysProcAttr == nil {
			c.SysProcAttr = &syscall.SysProcAttr{}
		}
		c.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		c.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		c.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		c.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	if err := c.Cmd.Start(); err != nil {
		c.host.Close()
		return fmt.Errorf("sandbox: start the helper: %w", err)
	}
	c.child.Close()
	r, listener, err := recvReply(fds[0], helperStartTimeout)
	if err == nil && !r.OK {
		err = errors.New(r.Err)
		if r.Unavailable {
			err = fmt.Errorf("%w: %s", ErrUnavailable, r.Err)
		}
	}
	if err != nil {
		if listener >= 0 {
			unix.Close(listener)
		}
		_ = c.Process.Kill()
		_ = c.Cmd.Wait()
		c.host.Close()
		return fmt.Errorf("sandbox: the command did not run: %w", err)
	}
	c.named = r.Named
	if listener >= 0 {
		c.sup = newSupervisor(listener, c.Process.Pid, c.rules, c.w.Filter.Network)
		go c.sup.run()
	}
	return nil
}

// Wait waits for the command, then for the supervisor to finish its
// account of what was refused.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	c.once.Do(func() {
		if c.sup != nil {
			c.sup.stop()
		}
		c.host.Close()
	})
	return err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Report says what the command was refused; complete after Wait.
func (c *Cmd) Report() Report {
	if c.sup == nil {
		return Report{Named: false}
	}
	r := c.sup.report()
	r.Named = c.named
	return r
}

func sendWire(fd int, w *wire) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := unix.Sendmsg(fd, b, nil, nil, 0); err != nil {
		return fmt.Errorf("sandbox: send the policy (%d bytes): %w", len(b), err)
	}
	return nil
}

// recvReply reads the helper's answer and the listener passed with it.
// The end of the socket (the helper died) is an error.
func recvReply(fd int, timeout time.Duration) (reply, int, error) {
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return reply{}, -1, fmt.Errorf("no answer from the helper: %w", err)
	}
	if n == 0 {
		return reply{}, -1, errors.New("the helper exited before the sandbox was in place")
	}
	listener := -1
	if oobn > 0 {
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) > 0 {
			if fds, err := unix.ParseUnixRights(&msgs[0]); err == nil && len(fds) > 0 {
				listener = fds[0]
				for _, extra := range fds[1:] {
					unix.Close(extra)
				}
			}
		}
	}
	var r reply
	if err := json.Unmarshal(buf[:n], &r); err != nil {
		return reply{}, listener, fmt.Errorf("bad answer from the helper: %w", err)
	}
	return r, listener, nil
}
