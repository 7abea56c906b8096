package permission

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Cautions: what a command will probably need beyond the sandbox's
// defaults, and the commands that delete or discard files. They never
// change the verdict (the rules decide); they keep the sandbox's auto mode
// from running such a command unasked and tell the approval which
// widening to offer before the first run. The lists are of common tools;
// a command not in them that reaches the network is refused by the
// sandbox, and the refusal is then offered as a widening.

// inert builtins change nothing outside the shell (redirections aside,
// which are checked as writes): they need no widening, so they do not
// narrow the widening the other commands of a line get from their rules.
var inert = set(`cd pushd popd dirs echo printf true false : test [ pwd exit set shift wait`)

// networkTools reach another machine whatever their arguments.
var networkTools = set(`curl wget ssh scp sftp ftp telnet nc netcat ncat ping ping6 dig nslookup host
	whois http https httpie aria2c lftp mosh gh hub glab`)

// sshTools talk SSH.
var sshTools = set(`ssh scp sftp mosh`)

// networkSubcommands are the subcommands of package managers and VCSs
// that fetch or publish.
var networkSubcommands = map[string]map[string]bool{
	"git": set(`push pull fetch clone ls-remote remote submodule send-email request-pull archive`),
	"npm": set(`install i ci add update upgrade up publish audit outdated view info login whoami exec
		create init dist-tag deprecate owner search unpublish`),
	"pnpm":     set(`install i add update up upgrade publish audit outdated dlx create fetch import`),
	"yarn":     set(`install add upgrade up publish audit outdated dlx create info npm`),
	"bun":      set(`install i add update upgrade publish create x`),
	"npx":      nil,
	"pip":      set(`install download search index`),
	"pip3":     set(`install download search index`),
	"pipx":     set(`install run upgrade upgrade-all reinstall`),
	"uv":       set(`add sync lock pip tool run venv python`),
	"poetry":   set(`install add update lock publish`),
	"go":       set(`get install`),
	"cargo":    set(`fetch install update add search publish login owner yank`),
	"gem":      set(`install update fetch push search`),
	"bundle":   set(`install update add`),
	"composer": set(`install require update create-project`),
	"apt":      set(`update install upgrade full-upgrade dist-upgrade download source`),
	"apt-get":  set(`update install upgrade dist-upgrade download source build-dep`),
	"brew":     set(`install update upgrade fetch reinstall tap`),
	"docker":   set(`pull push login build run`),
	"podman":   set(`pull push login build run`),
}

// goModNetwork: `go mod download`, `go mod tidy` fetch modules.
var goModNetwork = set(`download tidy`)

// gitWrites are the git subcommands that change the repository (.git):
// index, refs, objects or configuration.
var gitWrites = set(`add commit checkout switch merge rebase reset stash tag branch cherry-pick revert
	am apply rm mv fetch pull clone init gc prune repack notes worktree restore update-index
	update-ref config remote submodule bisect clean replace filter-branch maintenance pack-refs
	reflog sparse-checkout lfs`)

// gitListOnly: the forms of writing git subcommands that only list.
var gitListOnly = map[string]func(args []word) bool{
	// `git branch` and `git tag` list unless given a name or a flag that changes.
	"branch": func(args []word) bool {
		return listOnly(args, "-a", "-r", "--all", "--remotes", "-v", "-vv", "--list", "-l", "--show-current", "--contains", "--merged", "--no-merged")
	},
	"tag": func(args []word) bool {
		return listOnly(args, "-l", "--list", "-n", "--contains", "--merged", "--no-merged", "--points-at")
	},
	"stash": func(args []word) bool { return len(args) > 0 && (args[0].text == "list" || args[0].text == "show") },
	"remote": func(args []word) bool {
		return len(args) == 0 || args[0].text == "-v" || args[0].text == "show" || args[0].text == "get-url"
	},
	"config": func(args []word) bool {
		return hasAny(args, "--get", "--get-all", "--get-regexp", "-l", "--list", "--show-origin") && !hasAny(args, "--global", "--system")
	},
	"worktree": func(args []word) bool {
		return len(args) > 0 && args[0].text == "list"
	},
	"reflog": func(args []word) bool { return len(args) == 0 || args[0].text == "show" },
	"notes":  func(args []word) bool { return len(args) == 0 || args[0].text == "list" || args[0].text == "show" },
	"submodule": func(args []word) bool {
		return len(args) == 0 || args[0].text == "status" || args[0].text == "summary"
	},
	"lfs": func(args []word) bool {
		return len(args) > 0 && (args[0].text == "ls-files" || args[0].text == "status")
	},
}

// gitLocalForms: the forms of git's network subcommands that stay local.
var gitLocalForms = map[string]func(args []word) bool{
	"remote": func(args []word) bool {
		return len(args) == 0 || args[0].text != "update" && args[0].text != "show" && args[0].text != "prune"
	},
	"submodule": func(args []word) bool {
		return len(args) == 0 || args[0].text == "status" || args[0].text == "summary" || args[0].text == "init"
	},
	"archive": func(args []word) bool { return !hasPrefixAny(args, "--remote") },
}

func listOnly(args []word, listing ...string) bool {
	for _, a := range args {
		if !a.literal || !contains(listing, a.text) {
			return false
		}
	}
	return true
}

func hasAny(args []word, names ...string) bool {
	for _, a := range args {
		if contains(names, a.text) {
			return true
		}
	}
	return false
}

func hasPrefixAny(args []word, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a.text, prefix) {
			return true
		}
	}
	return false
}

// destructiveTools delete or overwrite files whatever their arguments.
var destructiveTools = set(`rm shred unlink truncate srm wipe`)

// gitDestructive discard work in the working tree.
var gitDestructive = map[string]func(args []word) bool{
	"clean": func([]word) bool { return true },
	"reset": func(args []word) bool { return hasAny(args, "--hard", "--merge", "--keep") },
	"checkout": func(args []word) bool {
		return hasAny(args, "-f", "--force", "--", ".", "-p", "--patch", "--ours", "--theirs")
	},
	"restore": func(args []word) bool { return !hasAny(args, "--staged", "-S") || hasAny(args, "--worktree", "-W") },
	"switch":  func(args []word) bool { return hasAny(args, "-f", "--force", "--discard-changes") },
	"stash": func(args []word) bool {
		return len(args) > 0 && (args[0].text == "drop" || args[0].text == "clear")
	},
	"rm": func([]word) bool { return true },
}

// caution records what one simple command (ws, after wrappers; base is
// its name) will probably need or destroy.
func (a *analysis) caution(ws []word, base string) {
	add := func(k Concern, ssh bool, format string, args ...any) {
		a.addCaution(base, k, ssh, format, args...)
	}
	args := ws[1:]
	switch {
	case destructiveTools[base]:
		add(ConcernDestructive, false, "%s deletes or overwrites files", base)
	case base == "dd" && hasPrefixAny(args, "of="):
		add(ConcernDestructive, false, "dd of= overwrites a file")
	case base == "rsync" && hasPrefixAny(args, "--delete"):
		add(ConcernDestructive, false, "rsync --delete deletes files")
	case base == "find":
		for i, w := range args {
			if (w.text == "-exec" || w.text == "-execdir" || w.text == "-ok" || w.text == "-okdir") && i+1 < len(args) {
				if n := filepath.Base(args[i+1].text); destructiveTools[n] || !args[i+1].literal {
					add(ConcernDestructive, false, "find %s %s deletes what it finds", w.text, args[i+1].text)
				}
			}
		}
	}
	if networkTools[base] {
		add(ConcernNetwork, sshTools[base], "%s reaches another machine", base)
	}
	if base == "rsync" || base == "scp" {
		for _, w := range args {
			if !strings.HasPrefix(w.text, "-") && remoteOperand(w.text) {
				add(ConcernNetwork, true, "%s copies to or from %s", base, shorten(w.text))
				break
			}
		}
	}
	if base == "git" {
		a.gitCautions(args)
		return
	}
	if subs, ok := networkSubcommands[base]; ok {
		sub := firstOperand(args)
		switch {
		case subs == nil: // npx: always fetches what it does not find
			add(ConcernNetwork, false, "%s downloads packages", base)
		case base == "go" && sub == "mod" && goModNetwork[firstOperand(args[1:])]:
			add(ConcernNetwork, false, "go mod %s downloads modules", firstOperand(args[1:]))
		case base == "go" && sub == "run" && hasAt(args):
			add(ConcernNetwork, false, "go run pkg@version downloads it")
		case base == "yarn" && sub == "":
			add(ConcernNetwork, false, "yarn installs packages")
		case subs[sub]:
			add(ConcernNetwork, false, "%s %s downloads or publishes", base, sub)
		}
	}
}

// gitCautions: git subcommands that reach a remote, write .git or
// discard work.
func (a *analysis) gitCautions(args []word) {
	sub, rest := gitSubcommand(args)
	if sub == "" {
		return
	}
	add := func(k Concern, ssh bool, format string, args ...any) {
		a.addCaution("git", k, ssh, format, args...)
	}
	if networkSubcommands["git"][sub] {
		if local := gitLocalForms[sub]; local == nil || !local(rest) {
			add(ConcernNetwork, true, "git %s reaches a remote", sub)
		}
	}
	if gitWrites[sub] {
		if list := gitListOnly[sub]; list == nil || !list(rest) {
			add(ConcernGit, false, "git %s writes the repository (.git)", sub)
		}
	}
	if d := gitDestructive[sub]; d != nil && d(rest) {
		add(ConcernDestructive, false, "git %s discards changes in the working tree", sub)
	}
}

// gitSubcommand skips git's own options (and the values of -C, -c,
// --git-dir and --work-tree) to its subcommand.
func gitSubcommand(args []word) (string, []word) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-C" || t == "-c" || t == "--git-dir" || t == "--work-tree" || t == "--namespace" || t == "--config-env":
			i++
		case strings.HasPrefix(t, "-"):
		default:
			return t, args[i+1:]
		}
	}
	return "", nil
}

// firstOperand is the first word not an option.
func firstOperand(args []word) string {
	for _, w := range args {
		if !strings.HasPrefix(w.text, "-") {
			return w.text
		}
	}
	return ""
}

func hasAt(args []word) bool {
	for _, w := range args {
		if !strings.HasPrefix(w.text, "-") && strings.Contains(w.text, "@") {
			return true
		}
	}
	return false
}

// remoteOperand: host:path or user@host:path (not C:\ or ./a:b).
func remoteOperand(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		return false
	}
	host := s[:i]
	return !strings.ContainsAny(host, "/") && len(host) > 1
}

// addCaution records a caution once.
func (a *analysis) addCaution(tool string, k Concern, ssh bool, format string, args ...any) {
	c := Caution{Concern: k, Reason: shortf(format, args...), SSH: ssh, Tool: tool}
	for _, have := range a.cautions {
		if have == c {
			return
		}
	}
	a.cautions = append(a.cautions, c)
}

func shortf(format string, args ...any) string {
	return shorten(strings.TrimSpace(fmt.Sprintf(format, args...)))
}
