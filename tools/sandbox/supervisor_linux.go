//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor runs in the host. It receives the seccomp notifications
// of the sandboxed process tree and does two things:
//
//   - It names what Landlock refuses. For each observed file call it
//     copies the arguments while the caller is stopped, lets the call go on
//     (SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel, with Landlock, decides)
//     and then checks the same compiled rules Landlock enforces, recording
//     the operations they refuse. A caller that rewrites its arguments
//     after the copy can only make the account wrong, never the decision.
//   - It decides connect(2), which Landlock does not cover for Unix
//     sockets: it never lets the call go on, since the kernel would read
//     the address again. It connects a duplicate of the caller's socket
//     (pidfd_getfd) to its own copy of the address when the policy allows
//     it, and answers with the result, or refuses.

const (
	ioctlNotifIDValid  = 0x40082102 // SECCOMP_IOCTL_NOTIF_ID_VALID
	ioctlNotifSetFlags = 0x40082104 // SECCOMP_IOCTL_NOTIF_SET_FLAGS

	maxDenials  = 100
	resolveSize = 4096
)

type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

type supervisor struct {
	fd      int
	root    int // the helper's pid: the sandbox is it and its descendants
	rules   *ruleSet
	network bool
	stopR   *os.File
	stopW   *os.File
	done    chan struct{}
	pending sync.WaitGroup // emulated connects

	mu       sync.Mutex
	denials  []Denial
	seen     map[string]int
	dropped  int
	resolved map[string]string // directory → real path, for the account only
}

func newSupervisor(fd, root int, rules *ruleSet, network bool) *supervisor {
	r, w, _ := os.Pipe()
	// Wake the supervisor on the caller's CPU (Linux 6.6+): a notification
	// round trip then costs one context switch less.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ioctlNotifSetFlags, 1)
	return &supervisor{fd: fd, root: root, rules: rules, network: network, stopR: r, stopW: w,
		done: make(chan struct{}), seen: map[string]int{}, resolved: map[string]string{}}
}

// stop ends the loop once the command is gone. Processes it left behind
// then get ENOSYS from the observed calls: nothing runs unsupervised.
func (s *supervisor) stop() {
	s.stopW.Close()
	<-s.done
	s.pending.Wait()
	unix.Close(s.fd)
	s.stopR.Close()
}

func (s *supervisor) report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Report{Denials: append([]Denial(nil), s.denials...), Dropped: s.dropped}
}

func (s *supervisor) run() {
	defer close(s.done)
	for {
		fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.stopR.Fd()), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process uses the filter any more
		}
		var n seccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue
			}
			return
		}
		s.handle(&n)
	}
}

func (s *supervisor) respond(id uint64, errno unix.Errno, cont bool) {
	r := seccompResp{id: id}
	if cont {
		r.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else if errno != 0 {
		r.error = -int32(errno)
	}
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
}

// valid reports whether the notification's caller still waits, so what
// was read from its pid was read from it.
func (s *supervisor) valid(id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), ioctlNotifIDValid, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

func (s *supervisor) handle(n *seccompNotif) {
	if uintptr(n.nr) == unix.SYS_CONNECT {
		s.connect(n)
		return
	}
	ops := decodeCall(n)
	var checks []fsCheck
	for _, op := range ops {
		if c, ok := s.prepare(int(n.pid), op); ok {
			checks = append(checks, c)
		}
	}
	if len(checks) == 2 && strings.HasSuffix(checks[0].op.kind, "-from") {
		checks[0].peer, checks[1].peer = checks[1].path, checks[0].path
	}
	if uintptr(n.nr) == unix.SYS_BIND {
		if c, ok := s.bind(n); ok {
			checks = append(checks, c)
		}
	}
	valid := s.valid(n.id)
	s.respond(n.id, 0, true)
	if !valid {
		return
	}
	for _, c := range checks {
		s.check(c)
	}
}

// fsOp is one path a call touches, as the caller wrote it.
type fsOp struct {
	kind  string // open, mkdir, mknod, unlink, rmdir, rename-from, rename-to, link-to, symlink, truncate, exec, bind
	dirfd int32
	addr  uint64 // the path's address in the caller
	flags uint64 // open flags, mknod mode
}

// fsCheck is an fsOp with its path made absolute (not yet resolved).
type fsCheck struct {
	op   fsOp
	path string
	peer string // the other path of a link or rename
}

const atFDCWD = -100

// decodeCall lists the paths of an observed call.
func decodeCall(n *seccompNotif) []fsOp {
	a := n.args
	fd := func(i int) int32 { return int32(a[i]) }
	switch uintptr(n.nr) {
	case unix.SYS_OPENAT:
		return []fsOp{{kind: "open", dirfd: fd(0), addr: a[1], flags: uint64(uint32(a[2]))}}
	case unix.SYS_OPENAT2:
		return []fsOp{{kind: "open2", dirfd: fd(0), addr: a[1], flags: a[2]}}
	case unix.SYS_MKDIRAT:
		return []fsOp{{kind: "mkdir", dirfd: fd(0), addr: a[1]}}
	case unix.SYS_MKNODAT:
		return []fsOp{{kind: "mknod", dirfd: fd(0), addr: a[1], flags: uint64(uint32(a[2]))}}
	case unix.SYS_UNLINKAT:
		if uint32(a[2])&unix.AT_REMOVEDIR != 0 {
			return []fsOp{{kind: "rmdir", dirfd: fd(0), addr: a[1]}}
		}
		return []fsOp{{kind: "unlink", dirfd: fd(0), addr: a[1]}}
	case unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2:
		return []fsOp{{kind: "rename-from", dirfd: fd(0), addr: a[1]}, {kind: "rename-to", dirfd: fd(2), addr: a[3]}}
	case unix.SYS_LINKAT:
		return []fsOp{{kind: "link-from", dirfd: fd(0), addr: a[1]}, {kind: "link-to", dirfd: fd(2), addr: a[3]}}
	case unix.SYS_SYMLINKAT:
		return []fsOp{{kind: "symlink", dirfd: fd(1), addr: a[2]}}
	case unix.SYS_TRUNCATE:
		return []fsOp{{kind: "truncate", dirfd: atFDCWD, addr: a[0]}}
	case unix.SYS_EXECVE:
		return []fsOp{{kind: "exec", dirfd: atFDCWD, addr: a[0]}}
	case unix.SYS_EXECVEAT:
		return []fsOp{{kind: "exec", dirfd: fd(0), addr: a[1]}}
	case unix.SYS_BIND:
		return nil
	}
	return decodeLegacyCall(n)
}

// prepare copies op's path out of the caller and makes it absolute.
func (s *supervisor) prepare(pid int, op fsOp) (fsCheck, bool) {
	if op.kind == "open2" {
		// struct open_how { u64 flags; u64 mode; u64 resolve; }
		b, err := readMem(pid, op.flags, 8)
		if err != nil {
			return fsCheck{}, false
		}
		op.kind, op.flags = "open", binary.LittleEndian.Uint64(b)
	}
	p, err := readString(pid, op.addr)
	if err != nil || p == "" {
		return fsCheck{}, false
	}
	for _, self := range []string{"/proc/self", "/proc/thread-self"} {
		if p == self || strings.HasPrefix(p, self+"/") {
			p = "/proc/" + strconv.Itoa(pid) + p[len(self):]
		}
	}
	if p[0] != '/' {
		base := "/proc/" + strconv.Itoa(pid) + "/cwd"
		if op.dirfd != atFDCWD {
			base = "/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(int(op.dirfd))
		}
		dir, err := os.Readlink(base)
		if err != nil || dir == "" || dir[0] != '/' {
			return fsCheck{}, false
		}
		p = dir + "/" + p
	}
	return fsCheck{op: op, path: p}, true
}

// check records op if the compiled rules refuse it.
func (s *supervisor) check(c fsCheck) {
	var access uint64
	var target string
	op := "write"
	switch c.op.kind {
	case "open":
		flags := c.op.flags
		if flags&unix.O_PATH != 0 {
			return
		}
		follow := flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL
		target = s.real(c.path, follow)
		st, err := os.Stat(target)
		switch {
		case err == nil && flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL:
			return // EEXIST, or created as allowed
		case err == nil:
			switch flags & unix.O_ACCMODE {
			case unix.O_RDONLY:
				access, op = llReadFile, "read"
				if st.IsDir() {
					access, op = llReadDir, "list"
				}
			case unix.O_WRONLY:
				access = llWriteFile
			default:
				access = llReadFile | llWriteFile
			}
			if flags&unix.O_TRUNC != 0 && flags&unix.O_ACCMODE != unix.O_RDONLY && st.Mode().IsRegular() {
				access |= llTruncate
			}
		case flags&unix.O_CREAT != 0:
			access, op = llMakeReg, "create"
			if !s.parentExists(target) {
				return
			}
			s.checkParent(op, target, access)
			return
		default:
			return
		}
	case "mkdir", "mknod", "symlink", "link-to", "rename-to":
		target = s.real(c.path, false)
		if _, err := os.Lstat(target); err == nil || !s.parentExists(target) {
			return // it exists (EEXIST, or the call was allowed) or cannot be created
		}
		access, op = llMakeDir, "create"
		switch c.op.kind {
		case "mknod":
			access = mknodRight(uint32(c.op.flags))
		case "symlink":
			access = llMakeSym
		case "link-to":
			access, op = llMakeReg, "link"
		case "rename-to":
			access, op = llMakeReg, "rename"
		}
		if c.peer != "" && filepath.Dir(target) != filepath.Dir(s.real(c.peer, false)) {
			access |= llRefer
		}
		s.checkParent(op, target, access)
		return
	case "link-from":
		target = s.real(c.path, false)
		if _, err := os.Lstat(target); err != nil || c.peer == "" {
			return
		}
		if filepath.Dir(target) != filepath.Dir(s.real(c.peer, false)) {
			s.checkParent("link", target, llRefer)
		}
		return
	case "unlink", "rmdir", "rename-from":
		target = s.real(c.path, false)
		if _, err := os.Lstat(target); err != nil {
			return // gone: missing from the start, or removed as allowed
		}
		access, op = llRemove, "remove"
		if c.op.kind == "rmdir" {
			access = llRemoveDir
		}
		if c.op.kind == "rename-from" {
			op = "rename"
			if st, err := os.Lstat(target); err == nil && st.IsDir() {
				access = llRemoveDir
			}
			if c.peer != "" && filepath.Dir(target) != filepath.Dir(s.real(c.peer, false)) {
				access |= llRefer
			}
		}
		s.checkParent(op, target, access)
		return
	case "truncate":
		target = s.real(c.path, true)
		if _, err := os.Stat(target); err != nil {
			return
		}
		access = llTruncate
	case "exec":
		target = s.real(c.path, true)
		if _, err := os.Stat(target); err != nil {
			return
		}
		access, op = llExecute, "exec"
	default:
		return
	}
	if !s.rules.allows(target, access) {
		s.record(Denial{Op: op, Path: target, Rule: s.rules.why(target, access)})
	} else if what, ok := s.otherProcess(target); ok {
		s.record(Denial{Op: op, Path: target, Rule: "another process's " + what + " (Landlock closes processes outside the sandbox)"})
	}
}

// ptraceGuarded are the /proc/<pid> entries the kernel opens only to a
// process allowed to trace pid, which Landlock limits to the sandbox.
var ptraceGuarded = map[string]bool{"environ": true, "mem": true, "auxv": true, "maps": true, "smaps": true,
	"pagemap": true, "stack": true, "syscall": true, "personality": true, "io": true, "fd": true,
	"cwd": true, "root": true, "exe": true, "map_files": true, "fdinfo": true, "numa_maps": true}

// otherProcess reports whether path is a ptrace-guarded /proc entry of a
// process outside the sandbox (not the helper or one of its descendants).
func (s *supervisor) otherProcess(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || !ptraceGuarded[parts[1]] {
		return "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || s.inSandbox(pid) {
		return "", false
	}
	return parts[1], true
}

// inSandbox reports whether pid is the helper or descends from it.
func (s *supervisor) inSandbox(pid int) bool {
	for range 64 {
		if pid == s.root {
			return true
		}
		if pid <= 1 {
			return false
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if i < 0 || len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
	}
	return false
}

func mknodRight(mode uint32) uint64 {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return llMakeFifo
	case unix.S_IFSOCK:
		return llMakeSock
	case unix.S_IFCHR:
		return llMakeChar
	case unix.S_IFBLK:
		return llMakeBlock
	}
	return llMakeReg
}

// checkParent records op on target if its directory lacks access.
func (s *supervisor) checkParent(op, target string, access uint64) {
	dir := filepath.Dir(target)
	if s.rules.allows(dir, access) {
		if _, ro := withinAny(target, s.rules.ROMounts); !ro {
			return
		}
	}
	s.record(Denial{Op: op, Path: target, Rule: s.rules.why(target, access)})
}

func (s *supervisor) parentExists(target string) bool {
	st, err := os.Stat(filepath.Dir(target))
	return err == nil && st.IsDir()
}

// real resolves path the way the kernel does: every directory's links,
// and the last component's when follow.
func (s *supervisor) real(path string, follow bool) string {
	for range 40 {
		dir, base := filepath.Split(path)
		dir = s.realDir(dir)
		path = filepath.Join(dir, base)
		if base == "" || base == "." || base == ".." {
			return s.realDir(path)
		}
		if !follow {
			return path
		}
		link, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(link) {
			link = dir + "/" + link
		}
		path = link
	}
	return path
}

// realDir resolves a directory's path, remembering answers: they serve
// only the account, which a racing rename can make wrong but not unsafe.
func (s *supervisor) realDir(dir string) string {
	if r, ok := s.resolved[dir]; ok {
		return r
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		r = filepath.Clean(dir)
	}
	if len(s.resolved) > resolveSize {
		s.resolved = map[string]string{}
	}
	s.resolved[dir] = r
	return r
}

func (s *supervisor) record(d Denial) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := d.Op + "\x00" + d.Path + "\x00" + d.Addr
	if i, ok := s.seen[key]; ok {
		if i >= 0 {
			s.denials[i].Count++
		}
		return
	}
	if len(s.denials) >= maxDenials {
		s.seen[key] = -1
		s.dropped++
		return
	}
	d.Count = 1
	s.seen[key] = len(s.denials)
	s.denials = append(s.denials, d)
}

// bind names a refused network bind (Landlock refuses it) and returns
// the socket file a Unix bind creates, for the file checks.
func (s *supervisor) bind(n *seccompNotif) (fsCheck, bool) {
	addr, err := readMem(int(n.pid), n.args[1], int(min(uint32(n.args[2]), 110)))
	if err != nil || len(addr) < 3 {
		return fsCheck{}, false
	}
	if a, ok := inetAddr(addr); ok {
		if !s.network {
			s.record(Denial{Op: "bind", Addr: a, Rule: "network access is off in the sandbox"})
		}
		return fsCheck{}, false
	}
	if binary.LittleEndian.Uint16(addr) != unix.AF_UNIX || addr[2] == 0 {
		return fsCheck{}, false
	}
	return s.prepare(int(n.pid), fsOp{kind: "mknod", dirfd: atFDCWD, addr: n.args[1] + 2, flags: unix.S_IFSOCK})
}

// connect decides a connect(2) call (see the type's comment).
func (s *supervisor) connect(n *seccompNotif) {
	pid := int(n.pid)
	size := int(uint32(n.args[2]))
	if size < 2 || size > 128 {
		s.respond(n.id, unix.EINVAL, false)
		return
	}
	addr, err := readMem(pid, n.args[1], size)
	if err != nil {
		s.respond(n.id, unix.EFAULT, false)
		return
	}
	if !s.valid(n.id) {
		return
	}
	switch binary.LittleEndian.Uint16(addr) {
	case unix.AF_UNIX:
		s.connectUnix(n, addr)
		return
	case unix.AF_INET, unix.AF_INET6:
		if !s.network {
			a, _ := inetAddr(addr)
			s.record(Denial{Op: "connect", Addr: a, Rule: "network access is off in the sandbox"})
			s.respond(n.id, unix.EACCES, false)
			return
		}
	}
	s.emulateConnect(n, addr, -1)
}

func (s *supervisor) connectUnix(n *seccompNotif, addr []byte) {
	pid := int(n.pid)
	if len(addr) <= 2 || addr[2] == 0 {
		name := "@" + string(bytes.TrimRight(addr[min(3, len(addr)):], "\x00"))
		s.record(Denial{Op: "connect", Path: name, Rule: "abstract Unix socket (the sandbox cannot tell whose it is)"})
		s.respond(n.id, unix.EACCES, false)
		return
	}
	p := cString(addr[2:])
	open := p
	if p[0] != '/' {
		open = "/proc/" + strconv.Itoa(pid) + "/cwd/" + p
	}
	fd, err := unix.Open(open, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		s.respond(n.id, err.(unix.Errno), false)
		return
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		unix.Close(fd)
		s.respond(n.id, unix.EACCES, false)
		return
	}
	if ok, why := s.rules.socketAllowed(real); !ok {
		unix.Close(fd)
		s.record(Denial{Op: "connect", Path: real, Rule: why})
		s.respond(n.id, unix.EACCES, false)
		return
	}
	// Connect to the inode just checked, through its descriptor, so a
	// renamed or relinked path cannot swap in another socket.
	sa := make([]byte, 2, 110)
	binary.LittleEndian.PutUint16(sa, unix.AF_UNIX)
	sa = append(sa, "/proc/self/fd/"+strconv.Itoa(fd)+"\x00"...)
	s.emulateConnect(n, sa, fd)
}

// emulateConnect connects a duplicate of the caller's socket to addr and
// answers with the result. closeFD (if ≥ 0) is closed afterwards.
func (s *supervisor) emulateConnect(n *seccompNotif, addr []byte, closeFD int) {
	pidfd, err := unix.PidfdOpen(int(n.pid), 0)
	if err != nil {
		if closeFD >= 0 {
			unix.Close(closeFD)
		}
		s.respond(n.id, unix.EACCES, false)
		return
	}
	sock, err := unix.PidfdGetfd(pidfd, int(int32(n.args[0])), 0)
	unix.Close(pidfd)
	if err != nil || !s.valid(n.id) {
		if closeFD >= 0 {
			unix.Close(closeFD)
		}
		if err == nil {
			unix.Close(sock)
		}
		errno, _ := err.(unix.Errno)
		if errno == 0 || errno == unix.EPERM {
			errno = unix.EACCES
		}
		s.respond(n.id, errno, false)
		return
	}
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
		unix.Close(sock)
		if closeFD >= 0 {
			unix.Close(closeFD)
		}
		s.respond(n.id, e, false)
	}()
}

// inetAddr renders an AF_INET or AF_INET6 socket address as host:port.
func inetAddr(b []byte) (string, bool) {
	switch binary.LittleEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) < 8 {
			return "", false
		}
		return net.JoinHostPort(net.IP(b[4:8]).String(), strconv.Itoa(int(binary.BigEndian.Uint16(b[2:4])))), true
	case unix.AF_INET6:
		if len(b) < 24 {
			return "", false
		}
		return net.JoinHostPort(net.IP(b[8:24]).String(), strconv.Itoa(int(binary.BigEndian.Uint16(b[2:4])))), true
	}
	return "", false
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// readMem copies n bytes at addr out of process pid.
func readMem(pid int, addr uint64, n int) ([]byte, error) {
	buf := make([]byte, n)
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(n)
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: n}}
	got, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, fmt.Errorf("short read of process %d", pid)
	}
	return buf, nil
}

// readString copies a NUL-terminated path (at most PATH_MAX) out of pid,
// a page at a time so that an unmapped page after it does not fail the read.
func readString(pid int, addr uint64) (string, error) {
	const pathMax = 4096
	var out []byte
	for len(out) < pathMax {
		chunk := int(4096 - (addr+uint64(len(out)))%4096)
		buf := make([]byte, chunk)
		local := []unix.Iovec{{Base: &buf[0]}}
		local[0].SetLen(chunk)
		remote := []unix.RemoteIovec{{Base: uintptr(addr) + uintptr(len(out)), Len: chunk}}
		got, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:got]...)
		if got < chunk {
			break
		}
	}
	return "", fmt.Errorf("path too long in process %d", pid)
}
