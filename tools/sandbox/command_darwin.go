package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

const seatbeltExec = "/usr/bin/sandbox-exec"

// Cmd is a command that runs in the sandbox (macOS: under sandbox-exec).
type Cmd struct {
	*exec.Cmd
}

// Probe reports what this machine enforces.
func Probe() Support {
	if _, err := os.Stat(seatbeltExec); err != nil {
		return Support{Reason: seatbeltExec + " is missing"}
	}
	return Support{Enforced: true, Mechanism: "seatbelt", NoNewPrivs: true}
}

// Command prepares argv to run under p's Seatbelt profile.
func Command(ctx context.Context, p Policy, argv ...string) (*Cmd, error) {
	return CommandWithHelper(ctx, "", p, argv...)
}

// CommandWithHelper is Command; macOS needs no helper of Fido's.
func CommandWithHelper(ctx context.Context, _ string, p Policy, argv ...string) (*Cmd, error) {
	if s := Probe(); !s.Enforced {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, s.Reason)
	}
	profile, err := SeatbeltProfile(p)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.TempDir, 0o700); err != nil {
		return nil, err
	}
	c := exec.CommandContext(ctx, seatbeltExec, append([]string{"-p", profile}, argv...)...)
	c.Env = p.Env(os.Environ())
	return &Cmd{Cmd: c}, nil
}

// Start starts the command.
func (c *Cmd) Start() error { return c.Cmd.Start() }

// Wait waits for it.
func (c *Cmd) Wait() error { return c.Cmd.Wait() }

// Run starts the command and waits for it.
func (c *Cmd) Run() error { return c.Cmd.Run() }

// Report cannot name refusals on macOS (Seatbelt logs them to the system
// log): Named is false.
func (c *Cmd) Report() Report { return Report{} }

// RunHelper exists on Linux only.
func RunHelper([]string) int {
	fmt.Fprintln(os.Stderr, "fido sandbox-exec: not used on macOS")
	return 125
}

// QuarantineGit has nothing to move: the Seatbelt profile refuses writes
// to the workspace's .git whether it exists or not.
func (c *Cmd) QuarantineGit() (string, error) { return "", nil }

// Prewarm has no helper to start ahead here.
func Prewarm() {}

// PrewarmHelper has no helper to start ahead here.
func PrewarmHelper(string) {}
