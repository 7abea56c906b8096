//go:build linux && (amd64 || arm64)

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Spare helpers. Starting the helper (the 28 MB fido binary: loading it and
// the Go runtime's start) was most of the sandbox's cost per command, so
// the helper is started ahead of time: a spare waits on its policy socket,
// and a command hands it the whole job — the policy, argv, directory,
// environment, session and process-group wishes, and its stdin, stdout and
// stderr as descriptors (SCM_RIGHTS) — and the spare restricts itself and
// execve's the command exactly as a helper started for it would. Every
// command takes a spare (one is started on the spot when none waits) and a
// new spare is started behind it. A spare holds no secret (its environment
// is empty; the job brings the command's), runs in the host's session (so
// bash_exec's stray sweep leaves it alone) and exits when the host's end
// of its socket closes, the host's death included.

// spareKey tells spares apart: the helper binary, and whether it was
// started in a new user and mount namespace (the read-only .git mount).
type spareKey struct {
	helper  string
	mountNS bool
}

// spare is a helper process waiting for its job.
type spare struct {
	cmd  *exec.Cmd
	host *os.File // the host's end of the policy socket
}

var spares = struct {
	sync.Mutex
	ready    map[spareKey]*spare
	starting map[spareKey]bool
}{ready: map[spareKey]*spare{}, starting: map[spareKey]bool{}}

// takeSpare returns a waiting spare for key, or starts one now, and starts
// the next one in the background.
func takeSpare(key spareKey) (*spare, error) {
	spares.Lock()
	s := spares.ready[key]
	delete(spares.ready, key)
	spares.Unlock()
	refill(key)
	if s != nil && s.alive() {
		return s, nil
	}
	if s != nil {
		s.discard()
	}
	return startSpare(key, nil)
}

// refill starts a spare for key in the background unless one waits or
// is starting.
func refill(key spareKey) {
	spares.Lock()
	if spares.ready[key] != nil || spares.starting[key] {
		spares.Unlock()
		return
	}
	spares.starting[key] = true
	spares.Unlock()
	go func() {
		s, err := startSpare(key, nil)
		spares.Lock()
		defer spares.Unlock()
		delete(spares.starting, key)
		if err == nil {
			if old := spares.ready[key]; old != nil {
				go old.discard()
			}
			spares.ready[key] = s
		}
	}()
}

// Prewarm starts a spare helper (this executable) for the commands to
// come, so the first one does not wait for the helper's start either. It
// does nothing where the sandbox is not enforced.
func Prewarm() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	PrewarmHelper(exe)
}

// PrewarmHelper is Prewarm with an explicit helper binary.
func PrewarmHelper(helper string) {
	sup := probeWith(helper)
	if !sup.Enforced {
		return
	}
	refill(spareKey{helper: helper, mountNS: sup.MountNS})
	refill(spareKey{helper: helper})
}

// startSpare starts one helper waiting on fd 3 for its job. clone, when
// set, are namespaces the caller wants (a test's private network
// namespace): such a helper is started for that one command.
func startSpare(key spareKey, clone *syscall.SysProcAttr) (*spare, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	host, child := os.NewFile(uintptr(fds[0]), "sandbox-host"), os.NewFile(uintptr(fds[1]), "sandbox-helper")
	defer child.Close()
	cmd := &exec.Cmd{Path: key.helper, Args: []string{key.helper, HelperCommand}, ExtraFiles: []*os.File{child}}
	// The spare's own environment holds nothing of the host's (its keys
	// least of all): the job brings the command's.
	cmd.Env = []string{}
	if v := os.Getenv(simulateABI0Env); v != "" {
		cmd.Env = append(cmd.Env, simulateABI0Env+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if clone != nil {
		cmd.SysProcAttr.Cloneflags = clone.Cloneflags
		cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings = clone.UidMappings, clone.GidMappings
	}
	if key.mountNS {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	if err := cmd.Start(); err != nil {
		host.Close()
		return nil, fmt.Errorf("sandbox: start the helper: %w", err)
	}
	return &spare{cmd: cmd, host: host}, nil
}

// alive reports whether the spare still waits (it was not killed).
func (s *spare) alive() bool {
	return s.cmd.Process.Signal(syscall.Signal(0)) == nil
}

// discard ends a spare that will not be used.
func (s *spare) discard() {
	s.host.Close() // the spare reads the end of its socket and exits
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// jobStdio turns what the caller set as stdin, stdout and stderr into
// descriptors for the helper: files as they are, nil as /dev/null, other
// readers and writers through a pipe copied by a goroutine (as exec.Cmd
// does). The child's ends are closed once sent; copies run until Wait.
type jobStdio struct {
	child   []*os.File // sent to the helper, closed after sending
	parent  []io.Closer
	copying sync.WaitGroup
	errs    []error
	mu      sync.Mutex
}

func (j *jobStdio) input(r io.Reader) error {
	if f, ok := r.(*os.File); ok {
		j.child = append(j.child, f)
		return nil
	}
	if r == nil {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		j.child = append(j.child, f)
		j.parent = append(j.parent, f)
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	j.child = append(j.child, pr)
	j.parent = append(j.parent, pr)
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return nil
}

func (j *jobStdio) output(w io.Writer) error {
	if f, ok := w.(*os.File); ok {
		j.child = append(j.child, f)
		return nil
	}
	if w == nil {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		j.child = append(j.child, f)
		j.parent = append(j.parent, f)
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	j.child = append(j.child, pw)
	j.parent = append(j.parent, pw)
	j.copying.Add(1)
	go func() {
		defer j.copying.Done()
		_, err := io.Copy(w, pr)
		pr.Close()
		if err != nil {
			j.mu.Lock()
			j.errs = append(j.errs, err)
			j.mu.Unlock()
		}
	}()
	return nil
}

// sent closes the descriptors only the helper needs now.
func (j *jobStdio) sent() {
	for _, c := range j.parent {
		c.Close()
	}
	j.parent = nil
}

// wait waits for the output copies (after the command exited).
func (j *jobStdio) wait() error {
	j.copying.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	return errors.Join(j.errs...)
}

func (j *jobStdio) fds() []int {
	out := make([]int, len(j.child))
	for i, f := range j.child {
		out[i] = int(f.Fd())
	}
	return out
}

// procAttrs reads the caller's SysProcAttr as the helper applies it
// (the spare was started before the caller said what it wants). clone is
// set when the caller wants namespaces of its own (CLONE_NEWNET …): they
// are made when a helper starts, so that command gets a helper of its own.
func procAttrs(a *syscall.SysProcAttr, w *wire) (clone *syscall.SysProcAttr, err error) {
	if a == nil {
		return nil, nil
	}
	rest := *a
	w.Setsid, w.Setpgid, w.Pdeathsig = rest.Setsid, rest.Setpgid, int(rest.Pdeathsig)
	rest.Setsid, rest.Setpgid, rest.Pdeathsig = false, false, 0
	if a.Setpgid && a.Pgid != 0 {
		return nil, errors.New("sandbox: Setpgid with a Pgid other than 0 is not supported")
	}
	rest.Pgid = 0
	if rest.Cloneflags&^(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS) != 0 {
		clone = &syscall.SysProcAttr{Cloneflags: rest.Cloneflags, UidMappings: rest.UidMappings, GidMappings: rest.GidMappings}
	}
	rest.Cloneflags, rest.UidMappings, rest.GidMappings, rest.GidMappingsEnableSetgroups = 0, nil, nil, false
	if rest.Credential != nil || rest.Chroot != "" || rest.Setctty || rest.Noctty || rest.Foreground || rest.Ptrace {
		return nil, errors.New("sandbox: only Setsid, Setpgid, Pdeathsig and Cloneflags of SysProcAttr are supported")
	}
	return clone, nil
}
