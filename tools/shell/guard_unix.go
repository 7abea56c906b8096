//go:build unix

package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/fido-nvim/fido/tools/sandbox"
)

// Guarded returns cmd wrapped to run under the guard (see GuardCommand):
// guard is the fido executable. The guard leads a new process group; the
// program runs in it with cmd's environment, directory and file
// descriptors. A cmd whose program was not found is returned as it is, so
// starting it reports that.
func Guarded(cmd *exec.Cmd, guard string) *exec.Cmd {
	if cmd.Err != nil || guard == "" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	args := append([]string{guard, GuardCommand, strconv.Itoa(os.Getpid()), "--", cmd.Path}, cmd.Args[1:]...)
	g := &exec.Cmd{Path: guard, Args: args, Dir: cmd.Dir, Env: cmd.Env,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr}
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentGoneSignal(g.SysProcAttr)
	return g
}

// GuardedSandbox is Guarded, with the guard running the program in the
// OS sandbox under pol: the guard stays outside it, as the program's
// supervisor and the subreaper of its tree, so it can still find and end
// every process of the tree when the host is gone. The policy reaches the
// guard on a pipe (fd 3), never on the command line. guard must be set.
func GuardedSandbox(cmd *exec.Cmd, guard string, pol sandbox.Policy) (*exec.Cmd, error) {
	if guard == "" {
		return nil, errors.New("the sandbox of a server needs its guard (the fido executable)")
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	b, err := json.Marshal(pol)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A policy is a few kilobytes: it fits the pipe before the guard reads it.
	_, err = w.Write(b)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	g := Guarded(cmd, guard)
	g.Args = append([]string{g.Args[0], g.Args[1], g.Args[2], "--sandbox-fd", "3"}, g.Args[3:]...)
	g.ExtraFiles = []*os.File{r}
	return g, nil
}

// StopGroup ends the process group pgid (a guard's): SIGTERM, so a guard
// ends its whole tree, then SIGKILL to the group once grace has passed. It
// reports whether anything of the group was running.
func StopGroup(pgid int, grace time.Duration) bool {
	if pgid <= 1 {
		return false
	}
	return stopProcessGroup(pgid, grace)
}

// awaitReport gives a sandboxed program's wait a moment to write what the
// sandbox refused, once the tree was ended.
func awaitReport(exited <-chan int) {
	select {
	case <-exited:
	case <-time.After(200 * time.Millisecond):
	}
}

// guardProc is the program the guard runs: plain, or in the sandbox.
type guardProc struct {
	plain *exec.Cmd
	box   *sandbox.Cmd
}

func (g guardProc) process() *exec.Cmd {
	if g.box != nil {
		return g.box.Cmd
	}
	return g.plain
}

// wait waits for the program; a sandboxed one's refusals go to stderr
// (the host's log of the server).
func (g guardProc) wait() error {
	if g.box == nil {
		return g.plain.Wait()
	}
	err := g.box.Wait()
	if rep := g.box.Report().String(); rep != "" {
		fmt.Fprint(os.Stderr, rep)
	}
	return err
}

// guardedProgram starts argv with the guard's stdio, in the sandbox when
// policyFD holds a policy.
func guardedProgram(policyFD int, argv []string) (guardProc, error) {
	if policyFD < 0 {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		return guardProc{plain: cmd}, cmd.Start()
	}
	f := os.NewFile(uintptr(policyFD), "sandbox-policy")
	b, err := io.ReadAll(io.LimitReader(f, 4<<20))
	f.Close()
	if err != nil {
		return guardProc{}, fmt.Errorf("read the sandbox policy: %w", err)
	}
	var pol sandbox.Policy
	if err := json.Unmarshal(b, &pol); err != nil {
		return guardProc{}, fmt.Errorf("read the sandbox policy: %w", err)
	}
	c, err := sandbox.Command(context.Background(), pol, argv...)
	if err != nil {
		return guardProc{}, err
	}
	// In the guard's process group: the host's group kill reaches it.
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.Env = os.Environ()
	c.Dir, _ = os.Getwd()
	return guardProc{box: c}, c.Start()
}

// RunGuard is the guard's main: args are <host pid> -- <program> [args…].
// It returns the program's exit code, or 1 when the guard ended the tree
// because the host went away or asked it to.
func RunGuard(args []string) int {
	policyFD := -1
	if len(args) > 3 && args[1] == "--sandbox-fd" {
		n, err := strconv.Atoi(args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "fido "+GuardCommand+": bad --sandbox-fd:", args[2])
			return 2
		}
		policyFD = n
		args = append([]string{args[0]}, args[3:]...)
	}
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: fido "+GuardCommand+" <host pid> [--sandbox-fd N] -- <program> [args…]")
		return 2
	}
	host, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fido "+GuardCommand+": bad host pid:", args[0])
		return 2
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	if os.Getppid() != host {
		return 1 // the host died before the guard was set up
	}
	_ = BecomeSubreaper()
	cmd, err := guardedProgram(policyFD, args[2:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot start %s: %v\n", args[2], err)
		return 127
	}
	// The server holds the pipes now; the guard's copies would keep the
	// host from seeing the server's output end.
	_ = os.Stdin.Close()
	_ = os.Stdout.Close()
	exited := make(chan int, 1)
	go func() {
		_ = cmd.wait()
		exited <- cmd.process().ProcessState.ExitCode()
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case code := <-exited:
			endOwnTree(time.Second) // what the server left running
			return code
		case s := <-sigs:
			// SIGUSR1 is the parent-death signal; the kernel also sends it
			// when only the host's thread that started the guard ended.
			if s == syscall.SIGUSR1 && os.Getppid() == host {
				continue
			}
			endOwnTree(time.Second)
			awaitReport(exited)
			return 1
		case <-tick.C:
			if os.Getppid() != host {
				endOwnTree(time.Second)
				awaitReport(exited)
				return 1
			}
			reapExitedExcept(cmd.process().Process.Pid)
		}
	}
}
