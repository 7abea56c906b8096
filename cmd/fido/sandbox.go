package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/shell"
)

// sandboxEnv chooses how bash_exec runs commands: "off", "ask" (the
// default: sandboxed where the machine enforces it, asked as before) or
// "auto" (sandboxed, and commands the sandbox makes harmless run unasked).
const sandboxEnv = "FIDO_SANDBOX"

// sandboxSetup is the host's sandbox configuration: where the per-
// conversation temp dirs and the sandbox's build caches live, what is
// hidden (Fido's whole state root among the protected paths), and the
// mode. cleanup removes the temp dirs.
func sandboxSetup(cfg agent.Config, stateDir string, getenv func(string) string) (c shell.SandboxConfig, warning string, cleanup func()) {
	mode, err := shell.ParseSandboxMode(getenv(sandboxEnv))
	if err != nil {
		warning = "Fido: " + err.Error() + "; using \"ask\""
	}
	home, _ := os.UserHomeDir()
	cache := strings.TrimSpace(getenv("XDG_CACHE_HOME"))
	if cache == "" {
		cache = xdg.CacheHome
	}
	cacheRoot := filepath.Join(cache, "fido", "sandbox")
	c = shell.SandboxConfig{
		Mode:       mode,
		Probe:      sandbox.Probe,
		Home:       home,
		StateDir:   cfg.StateRoot,
		RuntimeDir: getenv("XDG_RUNTIME_DIR"),
		// Per workspace (named like its state directory): what one
		// workspace's commands put in a build cache reaches no other's.
		CacheDir:         filepath.Join(cacheRoot, filepath.Base(stateDir)),
		ReadOnlyCacheDir: filepath.Join(cacheRoot, "read-only"),
		NvimSocket:       getenv("NVIM"),
		Personal:         []string{getenv("XDG_CONFIG_HOME"), getenv("XDG_STATE_HOME"), getenv("XDG_DATA_HOME"), cache},
	}
	cleanup = func() {}
	if mode != shell.SandboxOff {
		if dir, err := os.MkdirTemp("", "fido-sandbox-"); err == nil {
			c.TempRoot = dir
			cleanup = func() { _ = os.RemoveAll(dir) }
		} else {
			c.TempRoot = filepath.Join(os.TempDir(), fmt.Sprintf("fido-sandbox-%d", os.Getpid()))
		}
		for _, d := range []string{c.CacheDir, c.ReadOnlyCacheDir} {
			_ = os.MkdirAll(d, 0o700)
		}
	}
	return c, warning, cleanup
}

// sandboxReporter is a UI that shows the sandbox's state (the statusline).
type sandboxReporter interface {
	Sandbox(state, summary string)
}

// reportSandbox tells the UI how commands run, once the probe is done,
// and says once when they are not sandboxed although the mode wants it.
func reportSandbox(bash *shell.BashTool, mode string, ui agent.Screen, logf func(string, ...any)) {
	sup := bash.Support()
	state := bash.SandboxState()
	logf("sandbox: mode %s, %s", mode, sup.Summary())
	if r, ok := ui.(sandboxReporter); ok {
		summary := sup.Summary()
		if mode == shell.SandboxOff {
			summary = `commands are not sandboxed: sandbox = "off"`
		}
		r.Sandbox(state, summary)
	}
	if mode != shell.SandboxOff && !sup.Enforced {
		ui.Notify("Fido: commands are not sandboxed here ("+sup.Reason+"); every command is asked as without a sandbox, and subagents and plan mode run none", agent.LevelWarn)
		return
	}
	if sup.Enforced && mode != shell.SandboxOff {
		sandbox.Prewarm() // the first command does not wait for the helper's start
	}
}

// doctorSandbox prints what the sandbox enforces here, one fact a line
// ("ok:", "warn:" or "info:" first), for `fido doctor` and :checkhealth.
func doctorSandbox(out io.Writer, getenv func(string) string) {
	mode, err := shell.ParseSandboxMode(getenv(sandboxEnv))
	if err != nil {
		fmt.Fprintf(out, "warn: %v; using \"ask\"\n", err)
	}
	s := sandbox.Probe()
	switch {
	case mode == shell.SandboxOff:
		fmt.Fprintf(out, "warn: mode off (%s=off or setup({ sandbox = \"off\" })): commands run with your full authority once approved\n", sandboxEnv)
	case mode == shell.SandboxAuto:
		fmt.Fprintln(out, "ok: mode auto: commands run sandboxed; those asked about only for what the sandbox contains run unasked")
	default:
		fmt.Fprintln(out, "ok: mode ask: commands run sandboxed and are asked about as without a sandbox")
	}
	if !s.Enforced {
		fmt.Fprintf(out, "warn: NOT enforced: %s; every command asks, subagents and plan mode run none\n", s.Reason)
	} else {
		fmt.Fprintf(out, "ok: enforced: %s\n", s.Mechanism)
	}
	if s.Mechanism == "landlock" || s.LandlockABI > 0 {
		level := "ok"
		if s.LandlockABI < 1 {
			level = "warn"
		}
		fmt.Fprintf(out, "%s: Landlock ABI %d%s\n", level, s.LandlockABI, landlockNote(s.LandlockABI))
		fmt.Fprintf(out, "%s: seccomp user notifications: %s\n", okIf(s.Seccomp), yesNo(s.Seccomp, "refusals are named, connect is decided per address"))
		fmt.Fprintf(out, "%s: no_new_privs: %s\n", okIf(s.NoNewPrivs), yesNo(s.NoNewPrivs, "setuid binaries gain nothing"))
		switch {
		case !s.Enforced:
		case s.MountNS:
			fmt.Fprintln(out, "ok: mount namespace: yes (the workspace's .git is mounted read-only)")
		default:
			fmt.Fprintf(out, "info: mount namespace: no (%s): with a .git the workspace's top level is read-only\n", s.MountNSReason)
		}
	}
	fmt.Fprintf(out, "info: bubblewrap: %s\n", s.Bwrap)
}

func landlockNote(abi int) string {
	switch {
	case abi >= 6:
		return " (TCP, signals and abstract sockets restricted too)"
	case abi >= 4:
		return " (TCP connect and bind restricted too)"
	case abi >= 1:
		return " (files only; seccomp refuses the network)"
	}
	return ""
}

func okIf(b bool) string {
	if b {
		return "ok"
	}
	return "warn"
}

func yesNo(b bool, what string) string {
	if b {
		return "yes (" + what + ")"
	}
	return "no"
}
