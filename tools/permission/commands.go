package permission

import (
	"strings"
)

// neverStatic commands run code the parser never sees.
var neverStatic = map[string]bool{
	"eval": true, "source": true, ".": true, "alias": true, "trap": true,
	"enable": true, "fc": true, "coproc": true, "bind": true,
}

// escalates run a command as another user: always asked, whatever the rules.
var escalates = map[string]bool{
	"sudo": true, "su": true, "doas": true, "pkexec": true, "runuser": true, "sg": true, "newgrp": true,
}

// shells read commands from -c or their input.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"fish": true, "csh": true, "tcsh": true,
}

// runsCommands run a command line built from their arguments or input in a
// way Fido does not follow: always asked, whatever the rules.
var runsCommands = set(`xargs parallel sem watch flock script strace ltrace gdb lldb valgrind unshare
	nsenter chroot systemd-run firejail bwrap proot fakeroot fakechroot xvfb-run dbus-run-session
	ssh-agent unbuffer expect entr rlwrap torsocks proxychains proxychains4 caffeinate dc ed tmux screen
	at batch crontab socat`)

// changesDir are the builtins after which a relative path no longer means
// the workspace.
var changesDir = map[string]bool{"cd": true, "pushd": true, "popd": true}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// wrapperSpec says how to read a wrapper's own arguments. Every option must
// be known: an unknown one might take the next word as its value, so the
// command after it would be misread (asked instead).
type wrapperSpec struct {
	// flags and withArg are the short options without and with a value;
	// long and longArg the long ones (abbreviations are resolved).
	flags, withArg string
	long, longArg  []string
	// refuse are options ("-S", "--split-string") that make the wrapper run
	// something else than its operands, with why.
	refuse map[string]string
	// writes are the options ("-o", "--output") whose value is a file the
	// wrapper writes.
	writes map[string]bool
	// envAssigns: NAME=VALUE words come before the command (env).
	envAssigns bool
	// positional operands come before the command (timeout's duration).
	positional int
	// digits: -N is an option (nice -10).
	digits bool
}

// wrapperOption is what one option word of a wrapper means.
type wrapperOption struct {
	// values is how many of the following words are the option's value.
	values int
	// why is set when the user must be asked.
	why string
	// file is a file the option writes (literal says whether it is known).
	file     string
	literal  bool
	hasWrite bool
}

// option reads opt (an option word) with rest, the words after it.
func (s wrapperSpec) option(opt string, rest []word) wrapperOption {
	if strings.HasPrefix(opt, "--") {
		name, value, hasEq := strings.Cut(opt[2:], "=")
		full := s.longName(name)
		if full == "" {
			return wrapperOption{why: "is not an option Fido knows"}
		}
		if why := s.refuse["--"+full]; why != "" {
			return wrapperOption{why: why}
		}
		o := wrapperOption{}
		if contains(s.longArg, full) && !hasEq && len(rest) > 0 {
			o.values, value = 1, rest[0].text
			o.literal = rest[0].literal
		} else {
			o.literal = true
		}
		if s.writes["--"+full] {
			o.hasWrite, o.file = true, value
		}
		return o
	}
	if s.digits && isDigits(opt[1:]) {
		return wrapperOption{}
	}
	for j := 1; j < len(opt); j++ {
		ch := opt[j : j+1]
		if why := s.refuse["-"+ch]; why != "" {
			return wrapperOption{why: why}
		}
		switch {
		case strings.Contains(s.withArg, ch):
			o := wrapperOption{literal: true, file: opt[j+1:]}
			if o.file == "" && len(rest) > 0 {
				o.values, o.file, o.literal = 1, rest[0].text, rest[0].literal
			}
			o.hasWrite = s.writes["-"+ch]
			return o
		case strings.Contains(s.flags, ch):
		default:
			return wrapperOption{why: "is not an option Fido knows"}
		}
	}
	return wrapperOption{}
}

// longName resolves a long option as getopt_long does (a unique prefix
// names an option); a prefix of a refused option resolves to it, and an
// unknown or ambiguous one to "".
func (s wrapperSpec) longName(name string) string {
	var all []string
	all = append(all, s.long...)
	all = append(all, s.longArg...)
	for k := range s.refuse {
		if strings.HasPrefix(k, "--") {
			all = append(all, k[2:])
		}
	}
	var found []string
	for _, n := range all {
		if n == name {
			return n
		}
		if name != "" && strings.HasPrefix(n, name) {
			found = append(found, n)
		}
	}
	for _, n := range found {
		if s.refuse["--"+n] != "" {
			return n
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// wrappers run the command in the rest of their arguments.
var wrappers = map[string]wrapperSpec{
	"env": {
		flags: "i0v", withArg: "u",
		long:    []string{"ignore-environment", "null", "debug", "block-signal", "default-signal", "ignore-signal", "list-signal-handling", "help", "version"},
		longArg: []string{"unset"},
		refuse: map[string]string{
			"-S": "splits its argument into a new command line", "--split-string": "splits its argument into a new command line",
			"-C": "runs the command in another directory", "--chdir": "runs the command in another directory",
		},
		envAssigns: true,
	},
	"command": {flags: "pvV"},
	"busybox": {},
	"builtin": {},
	"exec":    {flags: "cl", withArg: "a"},
	"nice":    {withArg: "n", longArg: []string{"adjustment"}, long: []string{"help", "version"}, digits: true},
	"nohup":   {long: []string{"help", "version"}},
	"time": {
		flags: "apqvV", withArg: "fo", long: []string{"append", "portability", "quiet", "verbose", "version", "help"},
		longArg: []string{"format", "output"}, writes: map[string]bool{"-o": true, "--output": true},
	},
	"timeout": {
		flags: "v", withArg: "sk", long: []string{"foreground", "preserve-status", "verbose", "help", "version"},
		longArg: []string{"signal", "kill-after"}, positional: 1,
	},
	"stdbuf": {withArg: "ioe", longArg: []string{"input", "output", "error"}, long: []string{"help", "version"}},
	"ionice": {flags: "t", withArg: "cnpPu", long: []string{"ignore", "help", "version"}, longArg: []string{"class", "classdata", "pid", "pgid", "uid"}},
	"setsid": {flags: "cfw", long: []string{"ctty", "fork", "wait", "help", "version"}},
	"chrt": {
		flags: "abdefiomRrpv", withArg: "TPD",
		long:    []string{"all-tasks", "batch", "deadline", "ext", "fifo", "idle", "other", "rr", "reset-on-fork", "max", "pid", "verbose", "help", "version"},
		longArg: []string{"sched-runtime", "sched-period", "sched-deadline"}, positional: 1,
	},
	"taskset": {flags: "acp", long: []string{"all-tasks", "cpu-list", "pid", "help", "version"}, positional: 1},
}

// readsCommands reports a shell invocation that takes its commands from -c
// or from its input (no script file operand).
func readsCommands(args []word) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.literal {
			return true
		}
		if a.text == "--" {
			continue
		}
		if a.text == "--rcfile" || a.text == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(a.text, "-") || strings.HasPrefix(a.text, "+") {
			if strings.HasPrefix(a.text, "--") {
				continue
			}
			if strings.ContainsAny(a.text[1:], "cs") {
				return true
			}
			if strings.ContainsAny(a.text[1:], "oO") {
				i++ // -o errexit, -O extglob
			}
			continue
		}
		return false // a script file
	}
	return true
}

// dangerousVariable names variables that change which program a later
// command runs, what it loads or executes, or where it writes, so that a
// rule for the command no longer says what will run. Setting one (plainly,
// before a command, with export, declare, local, readonly, typeset, read,
// printf -v, a for loop, ${x:=…} or env NAME=…) always asks. The README
// lists the same names.
func dangerousVariable(name string) bool {
	if dangerousNames[name] || name == "" {
		return true
	}
	if harmlessVariables[name] {
		return false
	}
	if strings.HasPrefix(strings.ToUpper(name), "NPM_CONFIG_") {
		return true // npm reads these in any case
	}
	for _, p := range dangerousPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range dangerousSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

var dangerousNames = set(`PATH IFS ENV BASH_ENV SHELLOPTS BASHOPTS PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND
	GLOBIGNORE HISTFILE CDPATH HOME SHELL EDITOR VISUAL FCEDIT BROWSER PAGER TMPDIR TMP TEMP
	CC CXX CPP AR AS LD NM RANLIB STRIP OBJCOPY OBJDUMP FC MAKE MAKEFILES EXINIT VIMINIT
	GOROOT GOPATH GOBIN GOENV GOFLAGS GOCACHE GOMODCACHE GOTMPDIR GOTOOLCHAIN GOPROXY GOSUMDB
	GONOSUMDB GONOSUMCHECK GONOPROXY GOPRIVATE GOINSECURE GOWORK GOEXPERIMENT GOCOVERDIR
	CLASSPATH GNUPGHOME WGETRC INPUTRC PHPRC MYVIMRC MYGVIMRC IRBRC GEMRC PSQLRC SCREENRC NETRC
	GZIP BZIP BZIP2 XZ_DEFAULTS ZIP ZIPOPT UNZIP UNZIPOPT PHP_INI_SCAN_DIR HOSTALIASES TERMINFO
	KUBECONFIG LOCPATH GCONV_PATH NLSPATH ZDOTDIR GLIBC_TUNABLES VIRTUAL_ENV`)

// harmlessVariables match a pattern below but only tune output or
// metadata.
var harmlessVariables = set(`CGO_ENABLED PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONHASHSEED
	PYTHONIOENCODING PYTHONUTF8 GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME
	GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE GIT_TERMINAL_PROMPT`)

var dangerousPrefixes = []string{
	"LD_", "DYLD_", "GIT_", "BASH_", "PYTHON", "PERL", "RUBY", "YARN_", "PIP_", "CARGO_",
	"RUSTC", "RUSTDOC", "RUSTUP_", "CGO_", "LESS", "MAN", "MAKE", "XDG_", "SSH_", "GNUPG", "GPG_",
	"DOCKER_", "KUBE", "AWS_", "LUA_", "VIM", "NVIM_", "JAVA", "_JAVA", "JDK_", "MAVEN_", "GRADLE_",
	"TAR_", "RIPGREP_", "FZF_", "SUDO_", "GEM_", "BUNDLE_", "COMPOSER_", "RSYNC_", "CURL_",
	"OPENSSL_", "SYSTEMD_", "DENO_", "BUN_", "COREPACK_", "R_", "UV_", "POETRY_", "PIPENV_", "CONDA_",
	"DOTNET_", "HATCH_", "PDM_",
}

var dangerousSuffixes = []string{
	"PAGER", "EDITOR", "BROWSER", "_COMMAND", "_CMD", "_OPTIONS", "_OPTS", "OPT", "FLAGS", "PATH",
	"_PRELOAD", "_HOME", "CONFIG", "_CONFIG_FILE", "CONF", "ASKPASS", "SHELL", "WRAPPER", "_RSH",
}
