package permission

// Concern says what one reason to ask is about, so that a caller running
// the command in an OS sandbox can tell the reasons the sandbox makes
// harmless from those it does not (see Decision.SandboxHarmless).
type Concern int

const (
	// ConcernOther is any reason not classified below: never harmless.
	ConcernOther Concern = iota
	// ConcernUncovered: no allow rule covers a command (or the line runs
	// only assignments and tests).
	ConcernUncovered
	// ConcernCode: the line runs code or programs whose text is in the
	// line or in the workspace (an option of the escape table that runs a
	// program, a variable that changes what runs, arithmetic that reads
	// variables, a write to a relative path after cd or to a path named
	// at run time). What that code does is what any program in the
	// workspace can do: a sandbox contains it.
	ConcernCode
	// ConcernOpaque: what runs is not in the text (eval, source, sh -c,
	// xargs, a computed command name, a script read from a file). The
	// sandbox would contain it, but neither the deny rules nor the
	// destructive-command checks can see it, so it always asks.
	ConcernOpaque
	// ConcernEscalation: sudo and friends. Always asked.
	ConcernEscalation
	// ConcernOutside: a write outside the workspace, named in the text.
	ConcernOutside
	// ConcernGit: a write into .git (git's configuration and hooks run
	// commands later, outside any sandbox).
	ConcernGit
	// ConcernNetwork: the command reaches another machine.
	ConcernNetwork
	// ConcernDestructive: the command deletes or discards files.
	ConcernDestructive
	// ConcernDeny: the line may expand to a command a deny rule denies.
	ConcernDeny
	// ConcernUnreadable: the parser cannot read the line, or it holds a
	// construct Fido does not analyse.
	ConcernUnreadable
)

func (c Concern) String() string {
	switch c {
	case ConcernUncovered:
		return "uncovered"
	case ConcernCode:
		return "code"
	case ConcernOpaque:
		return "opaque"
	case ConcernEscalation:
		return "escalation"
	case ConcernOutside:
		return "outside"
	case ConcernGit:
		return "git"
	case ConcernNetwork:
		return "network"
	case ConcernDestructive:
		return "destructive"
	case ConcernDeny:
		return "deny"
	case ConcernUnreadable:
		return "unreadable"
	}
	return "other"
}

// sandboxContains reports whether a sandbox whose writes stay in the
// workspace (its .git read-only) and a temp dir, with no network and the
// user's secrets hidden, makes the concern harmless.
func (c Concern) sandboxContains() bool {
	return c == ConcernUncovered || c == ConcernCode
}

// Caution is something a command line will probably need that the
// sandbox does not give by default (the network, .git writes), or a
// command that deletes files. Cautions never change the verdict: the
// rules decide as before. They tell the sandbox's auto mode to ask anyway,
// and the approval which widening to offer before the first run.
type Caution struct {
	Concern Concern // ConcernNetwork, ConcernGit or ConcernDestructive
	// Reason is one short phrase: "git push reaches a remote".
	Reason string
	// SSH is set for a network command that usually talks SSH (ssh, scp,
	// rsync to host:path, git with a remote): it needs the user's ~/.ssh.
	SSH bool
	// Tool is the command's name (git, curl …).
	Tool string
}

// SandboxHarmless reports whether d asks only for reasons that running
// the line in the workspace-write sandbox makes harmless: every reason is
// ConcernUncovered or ConcernCode, and no caution (network, .git writes,
// deleting files) applies. Deny rules (Refuse) and lines that already
// run (Run) are not "harmless": they are decided.
func (d Decision) SandboxHarmless() bool {
	if d.Verdict != Ask || len(d.Cautions) > 0 || len(d.Concerns) != len(d.Reasons) {
		return false
	}
	for _, c := range d.Concerns {
		if !c.sandboxContains() {
			return false
		}
	}
	return true
}

// ReadOnlyHarmless is SandboxHarmless for a read-only sandbox (nothing
// writable but a temp dir, no network): writes outside or into .git,
// deletions and network access fail there, so they are harmless too; what
// the deny rules and the checks cannot see (opaque code, escalation,
// unreadable lines, a possible deny match) still asks.
func (d Decision) ReadOnlyHarmless() bool {
	if d.Verdict != Ask || len(d.Concerns) != len(d.Reasons) {
		return false
	}
	for _, c := range d.Concerns {
		switch c {
		case ConcernUncovered, ConcernCode, ConcernOutside, ConcernGit, ConcernNetwork, ConcernDestructive:
		default:
			return false
		}
	}
	return true
}

// NeedsNetwork reports whether a caution says the line reaches the network.
func (d Decision) NeedsNetwork() bool { return d.caution(ConcernNetwork) }

// NeedsGitWrite reports whether a caution says the line writes .git.
func (d Decision) NeedsGitWrite() bool { return d.caution(ConcernGit) }

// NeedsSSH reports whether a network caution says the line talks SSH;
// gitSSH says whether git's remotes do (the caller reads the workspace's
// git configuration; this package reads no files).
func (d Decision) NeedsSSH(gitSSH func() bool) bool {
	for _, c := range d.Cautions {
		if c.Concern != ConcernNetwork || !c.SSH {
			continue
		}
		if c.Tool != "git" || gitSSH == nil || gitSSH() {
			return true
		}
	}
	return false
}

func (d Decision) caution(k Concern) bool {
	for _, c := range d.Cautions {
		if c.Concern == k {
			return true
		}
	}
	return false
}
