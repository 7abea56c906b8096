//go:build linux && (amd64 || arm64)

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter is assembled here rather than with a library: its
// argument checks compare only the low 32 bits of int arguments, as the
// kernel reads them (a filter comparing all 64 bits can be passed by
// setting the high half), and it must be loaded with
// SECCOMP_FILTER_FLAG_NEW_LISTENER to hand its notifications to the
// supervisor.

const (
	retKillProcess = unix.SECCOMP_RET_KILL_PROCESS
	retErrno       = unix.SECCOMP_RET_ERRNO
	retUserNotif   = unix.SECCOMP_RET_USER_NOTIF
	retAllow       = unix.SECCOMP_RET_ALLOW

	// struct seccomp_data offsets (little-endian: an argument's low word first).
	offNr   = 0
	offArch = 4
	offArgs = 16

	msgFastOpen = 0x20000000
	tiocsti     = 0x5412
	tioclinux   = 0x541c
)

// bpfProgram is a classic BPF program under construction; jumps name
// labels that are resolved when it is finished.
type bpfProgram struct {
	ins    []unix.SockFilter
	labels map[string]int
	fixups []bpfFixup
}

type bpfFixup struct {
	at     int
	jt, jf string
}

func (p *bpfProgram) emit(code uint16, k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

func (p *bpfProgram) label(name string) { p.labels[name] = len(p.ins) }

// loadWord loads the 32-bit word at off of struct seccomp_data.
func (p *bpfProgram) loadWord(off uint32) { p.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }

// loadArg loads the low 32 bits of argument n.
func (p *bpfProgram) loadArg(n int) { p.loadWord(offArgs + uint32(n)*8) }

func (p *bpfProgram) ret(v uint32) { p.emit(unix.BPF_RET|unix.BPF_K, v) }

// jump compares the accumulator with k (op: BPF_JEQ, BPF_JGE, BPF_JSET)
// and goes to jt or jf; "" is the next instruction.
func (p *bpfProgram) jump(op uint16, k uint32, jt, jf string) {
	p.fixups = append(p.fixups, bpfFixup{at: len(p.ins), jt: jt, jf: jf})
	p.emit(unix.BPF_JMP|op|unix.BPF_K, k)
}

// retIf returns v when the accumulator equals k.
func (p *bpfProgram) retIf(k, v uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: k})
	p.ret(v)
}

func (p *bpfProgram) finish() ([]unix.SockFilter, error) {
	for _, f := range p.fixups {
		for _, side := range []struct {
			name string
			dst  *uint8
		}{{f.jt, &p.ins[f.at].Jt}, {f.jf, &p.ins[f.at].Jf}} {
			if side.name == "" {
				continue
			}
			to, ok := p.labels[side.name]
			off := to - f.at - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp filter: bad jump to %q", side.name)
			}
			*side.dst = uint8(off)
		}
	}
	return p.ins, nil
}

// filterSpec is what the filter refuses and what it hands the supervisor.
type filterSpec struct {
	Network    bool // inet sockets of any kind
	TCPSockets bool // without Network: TCP sockets (Landlock refuses their connect and bind)
	Notify     bool // hand the observed calls to a supervisor
}

// buildFilter assembles the helper's filter:
//   - another architecture's calls (i386 on x86-64) end the process, x32 calls fail;
//   - io_uring (whose operations no filter sees), the kernel keyrings and
//     terminal input injection are refused;
//   - sockets: Unix and netlink always; inet with Network, else only TCP
//     when Landlock restricts it (and not Multipath TCP, which Landlock
//     does not see); every other family is refused; TCP Fast Open (a
//     connect inside sendto) is refused without Network;
//   - the file and socket calls the supervisor observes go to it.
func buildFilter(s filterSpec) ([]unix.SockFilter, error) {
	p := &bpfProgram{labels: map[string]int{}}
	p.loadWord(offArch)
	p.jump(unix.BPF_JEQ, auditArch, "arch_ok", "")
	p.ret(retKillProcess)
	p.label("arch_ok")
	p.loadWord(offNr)
	if x32Bit != 0 {
		p.jump(unix.BPF_JGE, x32Bit, "", "native")
		p.ret(retErrno | uint32(unix.ENOSYS))
		p.label("native")
	}
	for _, nr := range refusedCalls {
		p.retIf(uint32(nr), retErrno|uint32(unix.EPERM))
	}
	// socket(domain, type, protocol)
	p.jump(unix.BPF_JEQ, unix.SYS_SOCKET, "", "not_socket")
	p.loadArg(0)
	p.retIf(unix.AF_UNIX, retAllow)
	p.retIf(unix.AF_NETLINK, retAllow)
	p.jump(unix.BPF_JEQ, unix.AF_INET, "inet", "")
	p.jump(unix.BPF_JEQ, unix.AF_INET6, "inet", "")
	p.ret(retErrno | uint32(unix.EAFNOSUPPORT))
	p.label("inet")
	switch {
	case s.Network:
		p.ret(retAllow)
	case s.TCPSockets:
		p.loadArg(1)
		p.emit(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xf)
		p.jump(unix.BPF_JEQ, unix.SOCK_STREAM, "", "no_net")
		p.loadArg(2)
		p.retIf(0, retAllow)
		p.retIf(unix.IPPROTO_TCP, retAllow)
		p.label("no_net")
		p.ret(retErrno | uint32(unix.EACCES))
	default:
		p.ret(retErrno | uint32(unix.EACCES))
	}
	p.label("not_socket")
	if !s.Network {
		for _, c := range []struct {
			nr  uintptr
			arg int
		}{{unix.SYS_SENDTO, 3}, {unix.SYS_SENDMSG, 2}, {unix.SYS_SENDMMSG, 3}} {
			next := fmt.Sprintf("not_%d", c.nr)
			p.jump(unix.BPF_JEQ, uint32(c.nr), "", next)
			p.loadArg(c.arg)
			p.jump(unix.BPF_JSET, msgFastOpen, "", "allow")
			p.ret(retErrno | uint32(unix.EACCES))
			p.label(next)
		}
		p.loadWord(offNr)
	}
	p.jump(unix.BPF_JEQ, unix.SYS_IOCTL, "", "not_ioctl")
	p.loadArg(1)
	p.retIf(tiocsti, retErrno|uint32(unix.EPERM))
	p.retIf(tioclinux, retErrno|uint32(unix.EPERM))
	p.ret(retAllow)
	p.label("not_ioctl")
	if s.Notify {
		for _, nr := range observedCalls {
			p.retIf(uint32(nr), retUserNotif)
		}
	} else {
		// Without a supervisor nothing may emulate connect: refuse
		// the calls only it could allow safely.
		p.retIf(unix.SYS_CONNECT, retErrno|uint32(unix.EACCES))
	}
	p.label("allow")
	p.ret(retAllow)
	return p.finish()
}

// errNestedListener: a filter with a listener is already installed (the
// command runs inside another sandbox); the kernel allows one per process.
var errNestedListener = errors.New("a seccomp supervisor is already installed")

// loadFilter installs the filter on the calling thread and returns its
// notification listener (-1 without Notify).
func loadFilter(s filterSpec) (int, error) {
	ins, err := buildFilter(s)
	if err != nil {
		return -1, err
	}
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	var flags uintptr
	if s.Notify {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if e == unix.EBUSY && s.Notify {
		return -1, errNestedListener
	}
	if e != 0 {
		return -1, fmt.Errorf("seccomp: %w", e)
	}
	if !s.Notify {
		return -1, nil
	}
	return int(fd), nil
}
