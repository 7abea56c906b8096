//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
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
	helper  string
	ctx     context.Context
	host    *os.File // the host's end of the policy socket
	sup     *supervisor
	stdio   *jobStdio
	named   bool
	mountNS bool
	// rulesetFD is the Landlock ruleset sent with the job (-1: none);
	// closed once sent.
	rulesetFD int
	once      sync.Once
	waited    chan struct{} // closed when Wait returns (ends the ctx watch)
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
	w := wire{Argv: argv, Scoped: scopedFor(sup.LandlockABI), Filter: filterSpec{Network: p.Network, Notify: true}}
	if !p.Network && sup.LandlockABI >= 4 {
		// TCP sockets may be created; Landlock refuses every connect and bind.
		w.HandledNet = llNetBindTCP | llNetConnectTCP
		w.Filter.TCPSockets = true
	}
	rules, rulesetFD, err := rulesFor(p, sup.LandlockABI, sup.MountNS, w.HandledNet, w.Scoped)
	if err != nil {
		return nil, err
	}
	c := &Cmd{rules: rules, mountNS: sup.MountNS && len(rules.ROMounts) > 0, helper: helper, ctx: ctx, rulesetFD: rulesetFD}
	w.Rules, w.MountNS = rules, c.mountNS
	if rulesetFD >= 0 {
		// The helper needs only the mounts; the ruleset comes ready.
		w.Rules, w.Ruleset = &ruleSet{ROMounts: rules.ROMounts}, true
		runtime.SetFinalizer(c, func(c *Cmd) { c.closeRuleset() })
	}
	c.w = w
	c.Cmd = exec.Command(helper, HelperCommand)
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

// Start hands the command to a spare helper (spare_linux.go) with the
// policy, its directory, environment and stdio, and returns once the
// command runs restricted, or with an error after which nothing ran.
func (c *Cmd) Start() error {
	if c.Process != nil {
		return errors.New("sandbox: already started")
	}
	if len(c.ExtraFiles) > 0 {
		return errors.New("sandbox: ExtraFiles are not supported")
	}
	w := c.w
	w.Dir, w.Env = c.Dir, c.Env
	if w.Env == nil {
		w.Env = os.Environ()
	}
	clone, err := procAttrs(c.SysProcAttr, &w)
	if err != nil {
		return err
	}
	if c.ctx != nil && c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	stdio := &jobStdio{}
	err = stdio.input(c.Stdin)
	if err == nil {
		err = stdio.output(c.Stdout)
	}
	if err == nil {
		if c.Stderr != nil && c.Stderr == c.Stdout {
			stdio.child = append(stdio.child, stdio.child[1]) // one descriptor keeps their order
		} else {
			err = stdio.output(c.Stderr)
		}
	}
	if err != nil {
		stdio.sent()
		return fmt.Errorf("sandbox: stdio: %w", err)
	}
	w.Stdio = len(stdio.child)
	fds := stdio.fds()
	if w.Ruleset {
		fds = append(fds, c.rulesetFD)
	}
	key := spareKey{helper: c.helper, mountNS: c.mountNS || w.Probe && w.MountNS}
	var s *spare
	for attempt := 0; ; attempt++ {
		if clone != nil {
			s, err = startSpare(key, clone)
		} else {
			s, err = takeSpare(key)
		}
		if err != nil {
			stdio.sent()
			return err
		}
		if err = sendWire(int(s.host.Fd()), &w, fds); err == nil || attempt == 1 {
			break
		}
		s.discard() // it died waiting: take another
	}
	stdio.sent()
	c.closeRuleset()
	if err != nil {
		s.discard()
		return err
	}
	c.Cmd, c.host, c.stdio = s.cmd, s.host, stdio
	r, listener, err := recvReply(int(c.host.Fd()), helperStartTimeout)
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
		_ = stdio.wait()
		c.host.Close()
		return fmt.Errorf("sandbox: the command did not run: %w", err)
	}
	c.named = r.Named
	if listener >= 0 {
		c.sup = newSupervisor(listener, c.Process.Pid, c.rules, c.w.Filter.Network)
		go c.sup.run()
	}
	c.waited = make(chan struct{})
	if c.ctx != nil && c.ctx.Done() != nil {
		go func(p *os.Process) {
			select {
			case <-c.ctx.Done():
				_ = p.Kill()
			case <-c.waited:
			}
		}(c.Process)
	}
	return nil
}

// Wait waits for the command and its output, then for the supervisor to
// finish its account of what was refused.
func (c *Cmd) Wait() error {
	if c.stdio == nil {
		return errors.New("sandbox: not started")
	}
	err := c.Cmd.Wait()
	copyErr := c.stdio.wait()
	c.once.Do(func() {
		if c.sup != nil {
			c.sup.stop()
		}
		c.host.Close()
		close(c.waited)
	})
	if err == nil {
		err = copyErr
	}
	return err
}

// QuarantineGit moves aside a .git the command created in a workspace
// that had none (Policy.QuarantineNewGit): a .git planted there would run
// its hooks and configuration (core.fsmonitor, core.pager) the next time
// anything runs git in the workspace, outside any sandbox. Call it once
// every process of the command has ended. It returns where the .git went
// ("" when there was none to move).
func (c *Cmd) QuarantineGit() (string, error) {
	if c.rules == nil || !c.rules.gitAbsent {
		return "", nil
	}
	if _, err := os.Lstat(c.rules.git); err != nil {
		return "", nil
	}
	to := c.rules.git + ".fido-quarantine-" + time.Now().UTC().Format("20060102T150405.000000000")
	if err := os.Rename(c.rules.git, to); err != nil {
		return "", fmt.Errorf("sandbox: move the .git the command created aside: %w", err)
	}
	return to, nil
}

// closeRuleset closes the ruleset descriptor once the helper has its own.
func (c *Cmd) closeRuleset() {
	if c.rulesetFD >= 0 {
		unix.Close(c.rulesetFD)
		c.rulesetFD = -1
	}
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

// sendWire sends the job, with fds (the command's stdio) attached.
func sendWire(fd int, w *wire, fds []int) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(fd, b, oob, nil, 0); err != nil {
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
