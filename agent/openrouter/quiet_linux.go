package openrouter

import (
	"net"
	"syscall"
)

// quietLowat is the SO_RCVLOWAT a paced socket waits under: more than a
// paced wait brings, so the kernel wakes no one before the wait is over.
const quietLowat = 64 << 10

// quieter returns a function that makes conn's socket wake its reader only
// for quietLowat bytes (true) or for any byte again (false), or nil when
// conn is not a socket it can reach (see streamBody.quiet).
func quieter(conn net.Conn) func(bool) {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok { // TLS
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(quiet bool) {
		v := 1
		if quiet {
			v = quietLowat
		}
		_ = rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, v)
		})
	}
}
