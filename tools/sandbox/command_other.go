//go:build !darwin && !(linux && (amd64 || arm64))

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// Cmd is a command that runs in the sandbox; on this system there is none.
type Cmd struct {
	*exec.Cmd
}

func unsupported() string {
	return "no sandbox is implemented for " + runtime.GOOS + "/" + runtime.GOARCH
}

// Probe reports that nothing is enforced here.
func Probe() Support { return Support{Reason: unsupported()} }

// Command always fails here, wrapping ErrUnavailable.
func Command(ctx context.Context, p Policy, argv ...string) (*Cmd, error) {
	return CommandWithHelper(ctx, "", p, argv...)
}

// CommandWithHelper always fails here, wrapping ErrUnavailable.
func CommandWithHelper(context.Context, string, Policy, ...string) (*Cmd, error) {
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, unsupported())
}

// Start, Wait, Run and Report exist so callers build everywhere.
func (c *Cmd) Start() error   { return ErrUnavailable }
func (c *Cmd) Wait() error    { return ErrUnavailable }
func (c *Cmd) Run() error     { return ErrUnavailable }
func (c *Cmd) Report() Report { return Report{} }

// RunHelper exists on Linux only.
func RunHelper([]string) int {
	fmt.Fprintln(os.Stderr, "fido sandbox-exec:", unsupported())
	return 125
}

// QuarantineGit has nothing to move here.
func (c *Cmd) QuarantineGit() (string, error) { return "", nil }

// Prewarm has no helper to start ahead here.
func Prewarm() {}

// PrewarmHelper has no helper to start ahead here.
func PrewarmHelper(string) {}
