package permission

import "strings"

// neverStatic commands run code the parser never sees.
var neverStatic = map[string]bool{
	"eval": true, "source": true, ".": true, "alias": true, "trap": true,
	"enable": true, "fc": true, "coproc": true,
}

// escalates run a command as another user: always asked, whatever the rules.
var escalates = map[string]bool{
	"sudo": true, "su": true, "doas": true, "pkexec": true, "runuser": true, "sg": true, "newgrp": true,
}

// shells read commands from -c or their input.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"fish": true, "csh": true, "tcsh": true, "busybox": true,
}

// changesDir are the builtins after which a relative path no longer means
// the workspace.
var changesDir = map[string]bool{"cd": true, "pushd": true, "popd": true}

// wrapperSpec says how to read a wrapper's own arguments.
type wrapperSpec struct {
	// withArg options take the next word as their value.
	withArg map[string]bool
	// refuse options make the wrapper run something else than its operands.
	refuse map[string]bool
	// envAssigns: NAME=VALUE words come before the command (env).
	envAssigns bool
	// positional operands come before the command (timeout's duration).
	positional int
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// wrappers run the command in the rest of their arguments.
var wrappers = map[string]wrapperSpec{
	"env":     {withArg: set("-u --unset -C --chdir"), refuse: set("-S --split-string"), envAssigns: true},
	"command": {},
	"builtin": {},
	"exec":    {withArg: set("-a")},
	"nice":    {withArg: set("-n --adjustment")},
	"nohup":   {},
	"time":    {withArg: set("-f --format -o --output")},
	"timeout": {withArg: set("-s --signal -k --kill-after"), positional: 1},
	"stdbuf":  {withArg: set("-i -o -e --input --output --error")},
	"ionice":  {withArg: set("-c -n -p -P -u --class --classdata")},
	"setsid":  {},
	"chrt":    {positional: 1},
	"taskset": {positional: 1},
}

// readsCommands reports a shell invocation that takes its commands from -c
// or from its input (no script file operand).
func readsCommands(args []word) bool {
	for _, a := range args {
		if !a.literal {
			return true
		}
		if a.text == "--" {
			continue
		}
		if strings.HasPrefix(a.text, "-") || strings.HasPrefix(a.text, "+") {
			if !strings.HasPrefix(a.text, "--") && strings.ContainsAny(a.text[1:], "cs") {
				return true
			}
			continue
		}
		return false // a script file
	}
	return true
}

// findRuns reports find arguments that run commands or delete files.
func findRuns(args []word) bool {
	for _, a := range args {
		switch a.text {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return true
		}
	}
	return false
}

// dangerousVariable names variables that change which program runs or what
// it loads, so a rule for the command no longer says what will run.
func dangerousVariable(name string) bool {
	switch name {
	case "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
		"HOME", "XDG_CONFIG_HOME", "CDPATH", "EDITOR", "VISUAL", "GOFLAGS", "GOENV", "GOTOOLCHAIN",
		"CC", "CXX", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PERL5LIB", "RUBYLIB", "NODE_PATH",
		"GCONV_PATH", "SSH_ASKPASS", "SUDO_ASKPASS", "TMPDIR":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range []string{"PAGER", "_COMMAND", "_OPTIONS", "OPT", "_PRELOAD", "_EDITOR"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
