//go:build unix

package shell

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
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

// StopGroup ends the process group pgid (a guard's): SIGTERM, so a guard
// ends its whole tree, then SIGKILL to the group once grace has passed. It
// reports whether anything of the group was running.
func StopGroup(pgid int, grace time.Duration) bool {
	if pgid <= 1 {
		return false
	}
	return stopProcessGroup(pgid, grace)
}

// RunGuard is the guard's main: args are <host pid> -- <program> [args…].
// It returns the program's exit code, or 1 when the guard ended the tree
// because the host went away or asked it to.
func RunGuard(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: fido "+GuardCommand+" <host pid> -- <program> [args…]")
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
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot start %s: %v\n", args[2], err)
		return 127
	}
	// The server holds the pipes now; the guard's copies would keep the
	// host from seeing the server's output end.
	_ = os.Stdin.Close()
	_ = os.Stdout.Close()
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
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
			return 1
		case <-tick.C:
			if os.Getppid() != host {
				endOwnTree(time.Second)
				return 1
			}
			reapExitedExcept(cmd.Process.Pid)
		}
	}
}
