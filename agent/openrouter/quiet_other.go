//go:build !linux

package openrouter

import "net"

// quieter is Linux's SO_RCVLOWAT (quiet_linux.go); elsewhere paced reads
// wait without it.
func quieter(net.Conn) func(bool) { return nil }
