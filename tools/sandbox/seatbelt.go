package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SeatbeltProfile is the macOS sandbox-exec profile for p: reading
// everywhere but the hidden paths, writing only in the workspace (not its
// .git unless GitWritable), the temp dir and Writable, no network unless
// allowed, Unix sockets only in the writable directories and UnixSockets.
// Seatbelt applies the last matching rule, so the denials follow the
// grants they narrow. Pure: paths are used as given (the caller resolves
// /tmp → /private/tmp and the like).
func SeatbeltProfile(p Policy) (string, error) {
	p, err := p.validate()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("(version 1)")
	line("(deny default)")
	line(";; processes")
	line("(allow process-exec process-fork)")
	line("(allow signal (target same-sandbox))")
	line("(allow sysctl-read)")
	line("(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") (global-name \"com.apple.system.logger\") (global-name \"com.apple.system.notification_center\"))")
	line("(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata)")
	line("(allow pseudo-tty)")
	line(";; files: everything is readable, then the hidden paths are not")
	line("(allow file-read*)")
	line("(allow file-write-data file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\"))")
	var writable []string
	if !p.ReadOnly {
		writable = append(writable, p.Workspace)
	}
	writable = append(writable, p.TempDir)
	writable = append(writable, p.Writable...)
	line(";; writable directories")
	for _, w := range writable {
		line("(allow file-write* %s)", sbSubpath(w))
	}
	if !p.ReadOnly && !p.GitWritable {
		line(";; the workspace's .git stays read-only")
		line("(deny file-write* %s)", sbSubpath(filepath.Join(p.Workspace, ".git")))
	}
	if len(p.Deny) > 0 {
		line(";; hidden paths")
		for _, d := range p.Deny {
			line("(deny file-read* file-write* %s)", sbSubpath(d))
		}
	}
	line(";; network")
	if p.Network {
		line("(allow network-outbound network-inbound network-bind)")
		line("(allow system-socket)")
		line("(allow mach-lookup (global-name \"com.apple.dnssd.service\") (global-name \"com.apple.SystemConfiguration.configd\"))")
	} else {
		for _, w := range append(writable, p.UnixSockets...) {
			line("(allow network-outbound (remote unix-socket (subpath %s)))", sbString(w))
		}
		line("(allow network-bind (local unix-socket (subpath %s)))", sbString(p.TempDir))
	}
	return b.String(), nil
}

func sbSubpath(p string) string { return "(subpath " + sbString(p) + ")" }

// sbString quotes s as an SBPL string literal.
func sbString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
