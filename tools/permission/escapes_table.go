package permission

import (
	"path/filepath"
	"strings"
)

// escapes maps a command's base name to what reads its arguments. Each
// entry names the options and operands of that tool that run a program or
// write outside the workspace (README: "Command rules and modes").
var escapes = map[string]func(*call){
	"git": checkGit, "rg": checkRg,
	"sed": checkSed, "gsed": checkSed,
	"awk": checkAwk, "gawk": checkAwk, "mawk": checkAwk, "nawk": checkAwk,
	"sort": checkSort, "find": checkFind, "tar": checkTar, "gtar": checkTar,
	"make": checkMake, "gmake": checkMake, "go": checkGo,
	"npm": checkNpm, "pnpm": checkNpm, "yarn": checkNpm, "npx": checkNpm, "bun": checkNpm, "bunx": checkNpm,
	"deno": checkDeno,
	"less": checkLess, "man": checkMan,
	"vim": checkEditor, "nvim": checkEditor, "vi": checkEditor, "ex": checkEditor, "view": checkEditor,
	"vimdiff": checkEditor, "gvim": checkEditor, "rvim": checkEditor, "emacs": checkEditor, "nano": checkEditor,
	"psql": checkDatabaseClient, "mysql": checkDatabaseClient, "mariadb": checkDatabaseClient,
	"nc": checkNetcat, "ncat": checkNetcat, "netcat": checkNetcat, "pandoc": checkPandoc,
	"shuf": checkShuf, "uniq": checkUniq, "iconv": checkIconv,
	"node": checkNode, "nodejs": checkNode, "perl": checkPerl, "ruby": checkRuby, "php": checkPhp,
	"lua": checkLua, "luajit": checkLua, "Rscript": checkRscript,
	"zip": checkZip, "unzip": checkUnzip, "rsync": checkRsync,
	"ssh": checkSSH, "scp": checkScp, "sftp": checkSftp,
	"curl": checkCurl, "wget": checkWget,
	"tee": checkTee, "cp": checkCp, "mv": checkMv, "ln": checkLn, "install": checkInstall, "dd": checkDd,
	"rm":    checkWritesOperands(optSpec{longOpt: []string{"interactive", "preserve-root"}, abbrev: true}),
	"rmdir": checkWritesOperands(optSpec{abbrev: true}), "unlink": checkWritesOperands(optSpec{}),
	"touch":  checkWritesOperands(optSpec{short: "rdt", long: []string{"reference", "date", "time"}, abbrev: true}),
	"mkdir":  checkWritesOperands(optSpec{short: "m", long: []string{"mode"}, longOpt: []string{"context"}, abbrev: true}),
	"mkfifo": checkWritesOperands(optSpec{short: "m", long: []string{"mode"}, abbrev: true}),
	"mknod":  checkWritesOperands(optSpec{short: "m", long: []string{"mode"}, abbrev: true}),
	"shred": checkWritesOperands(optSpec{short: "ns", long: []string{"iterations", "size", "random-source"},
		longOpt: []string{"remove"}, abbrev: true}),
	"truncate": checkWritesOperands(optSpec{short: "sr", long: []string{"size", "reference"}, abbrev: true}),
	"chmod":    checkChmod, "chown": checkChmod, "chgrp": checkChmod,
	"patch": checkPatch, "split": checkSplit, "csplit": checkCsplit,
	"gzip": checkCompress, "gunzip": checkCompress, "bzip2": checkCompress, "bunzip2": checkCompress,
	"xz": checkCompress, "unxz": checkCompress, "zstd": checkCompress, "unzstd": checkCompress,
	"lz4": checkCompress, "compress": checkCompress,
	"sqlite3": checkSqlite,
	"test":    checkTest, "[": checkTest,
	"read": checkRead, "mapfile": checkMapfile, "readarray": checkMapfile, "printf": checkPrintf,
	"getopts": checkGetopts, "wait": checkWait, "unset": checkUnset,
	"compgen": checkCompgen, "complete": checkCompgen, "hash": checkHash,
	"cd": checkCd, "pushd": checkCd,
	"declare": checkDeclCommand, "typeset": checkDeclCommand, "local": checkDeclCommand,
	"export": checkDeclCommand, "readonly": checkDeclCommand, "let": checkDeclCommand,
}

// escapesByPrefix catch versioned names (python3.12, pypy3).
var escapesByPrefix = map[string]func(*call){"python": checkPython, "pypy": checkPython}

// last is the index of a command's last word: findings about what the
// command's environment changes sit there or later, so no rule covers them.
func (c *call) last() int { return len(c.ws) }

// --- git

// gitValues are the long options of git subcommands that always take a
// value; gitShortValues the short ones, per subcommand.
var gitValues = []string{
	"message", "file", "author", "date", "format", "since", "until", "after", "before", "max-count",
	"grep", "output", "output-directory", "template", "upload-pack", "receive-pack", "exec", "prefix",
	"separate-git-dir", "reference", "depth", "branch", "origin", "config", "smtp-server", "to", "cc",
	"subject", "strategy", "strategy-option", "onto", "remote", "directory", "to-cmd", "cc-cmd", "header-cmd",
	"sendmail-cmd", "open-files-in-pager-program",
}

var gitShortValues = map[string]string{
	"commit": "mFCct", "tag": "mFu", "log": "n", "shortlog": "n", "grep": "efABCm", "checkout": "bB",
	"switch": "cC", "clone": "objuc", "format-patch": "o", "rebase": "xsX", "archive": "o", "merge": "msX",
	"revert": "m", "cherry-pick": "mX", "stash": "m", "notes": "mFC", "am": "pC",
}

func checkGit(c *call) {
	i := 1
	for ; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			c.flag(i, "the git subcommand or option is computed at run time")
			return
		}
		t := w.text
		if !strings.HasPrefix(t, "-") {
			break
		}
		value := func() (string, bool, int) {
			if _, v, ok := strings.Cut(t, "="); ok && strings.HasPrefix(t, "--") {
				return v, true, i
			}
			if i+1 < len(c.ws) {
				i++
				return c.ws[i].text, c.ws[i].literal, i
			}
			return "", true, i
		}
		name, _, _ := strings.Cut(t, "=")
		switch {
		case t == "-c" || name == "--config-env":
			_, _, at := value()
			c.flag(at, "git %s sets configuration, which can run programs (core.pager, core.fsmonitor, alias.*)", name)
		case strings.HasPrefix(t, "-c"):
			c.flag(i, "git -c sets configuration, which can run programs (core.pager, core.fsmonitor, alias.*)")
		case t == "-C":
			v, lit, at := value()
			c.dirOperand(at, v, lit, "git -C")
			if lit && c.a.checker.inside(v) && !filepath.IsAbs(v) {
				c.dir = filepath.Join(c.dir, v)
			}
		case name == "--git-dir" || name == "--work-tree":
			v, lit, at := value()
			c.dirOperand(at, v, lit, "git "+name)
		case name == "--exec-path" && strings.Contains(t, "="):
			c.flag(i, "git --exec-path= runs git's commands from another directory")
		case name == "--namespace" || name == "--super-prefix" || name == "--list-cmds" || name == "--attr-source":
			if !strings.Contains(t, "=") {
				value()
			}
		case contains(strings.Fields(`-p --paginate -P --no-pager --bare --no-replace-objects --literal-pathspecs
			--glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --exec-path
			--html-path --man-path --info-path --version -v --help -h --no-lazy-fetch`), t):
		default:
			c.flag(i, "git %s is not an option Fido knows", t)
		}
	}
	if i >= len(c.ws) {
		return
	}
	sub := c.ws[i].text
	spec := optSpec{short: gitShortValues[sub], long: gitValues, abbrev: true}
	p := c.parse(spec, i+1)
	operand := func(k int) (int, bool) {
		if k < len(p.operands) {
			return p.operands[k], true
		}
		return 0, false
	}
	for _, o := range p.opts {
		switch {
		case o.is(spec, "output"):
			c.writeOpt(o)
		case sub == "format-patch" && o.is(spec, "-o", "output-directory"), sub == "archive" && o.is(spec, "-o"):
			c.writeOpt(o)
		case sub == "grep" && o.is(spec, "-O", "open-files-in-pager"):
			c.flag(o.at, "git grep -O runs a pager program on the files it found")
		case sub == "rebase" && o.is(spec, "-x", "exec"):
			c.flag(o.vat, "git rebase --exec runs a command after each commit")
		case o.is(spec, "upload-pack", "receive-pack") || sub == "clone" && o.is(spec, "-u", "-c", "config", "template") ||
			sub == "init" && o.is(spec, "template") || (sub == "push" || sub == "fetch" || sub == "pull" ||
			sub == "ls-remote" || sub == "archive") && o.is(spec, "exec"):
			c.flag(o.vat, "git %s %s runs a program or sets configuration that can", sub, o.name())
		case o.is(spec, "separate-git-dir"):
			c.writeOpt(o)
		case sub == "checkout-index" && o.is(spec, "prefix"):
			c.writeOpt(o)
		case sub == "send-email" && o.is(spec, "smtp-server", "to-cmd", "cc-cmd", "header-cmd", "sendmail-cmd"):
			c.flag(o.vat, "git send-email %s runs a program", o.name())
		case sub == "help" && o.is(spec, "-w", "web"):
			c.flag(o.at, "git help --web starts a web browser")
		case sub == "apply" && o.is(spec, "unsafe-paths"):
			c.flagAs(ConcernOutside, o.at, "git apply --unsafe-paths writes outside the repository")
		}
	}
	for _, k := range p.operands {
		if w := c.ws[k]; w.literal && strings.HasPrefix(w.text, "ext::") {
			c.flag(k, "an ext:: URL makes git run a command")
		}
	}
	switch sub {
	case "difftool", "mergetool", "filter-branch", "instaweb", "web--browse", "daemon", "shell", "filter-repo":
		c.flag(i, "git %s runs programs Fido cannot check", sub)
	case "submodule", "bisect":
		for _, k := range p.operands {
			if t := c.ws[k].text; t == "foreach" || t == "run" {
				c.flag(k, "git %s %s runs a command", sub, t)
			}
		}
	case "config":
		checkGitConfig(c, spec, p)
	case "clone":
		if k, ok := operand(1); ok {
			c.writeWord(k)
		} else {
			c.writesHere(i)
		}
	case "init":
		if k, ok := operand(0); ok {
			c.writeWord(k)
		}
	case "worktree":
		if k, ok := operand(0); ok && (c.ws[k].text == "add" || c.ws[k].text == "move") {
			if len(p.operands) > 1 {
				c.writeWord(p.operands[len(p.operands)-1])
				if c.ws[k].text == "add" {
					c.writeWord(p.operands[1])
				}
			}
		}
	case "bundle":
		if k, ok := operand(0); ok && c.ws[k].text == "create" {
			if f, ok := operand(1); ok {
				c.writeWord(f)
			}
		}
	case "maintenance":
		if k, ok := operand(0); ok && c.ws[k].text != "run" {
			c.flagAs(ConcernOutside, k, "git maintenance %s writes scheduler or global configuration", c.ws[k].text)
		}
	}
}

// checkGitConfig: git config only reads unless it sets, unsets or edits.
func checkGitConfig(c *call, spec optSpec, p parsedArgs) {
	read := false
	for _, o := range p.opts {
		switch {
		case o.is(spec, "-e", "edit", "add", "unset", "unset-all", "replace-all", "rename-section", "remove-section"):
			c.flagAs(ConcernGit, o.at, "git config %s writes configuration, which can run programs", o.name())
			return
		case o.is(spec, "-l", "list", "get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool"):
			read = true
		}
	}
	if len(p.operands) > 0 {
		switch c.ws[p.operands[0]].text {
		case "get", "list":
			read = true
		case "set", "unset", "rename-section", "remove-section", "edit":
			read = false
		}
	}
	if !read && len(p.operands) != 1 {
		c.flagAs(ConcernGit, c.last()-1, "git config writes configuration, which can run programs")
	}
}

// dirOperand: the command works in dir, which must be a literal directory
// in the workspace.
func (c *call) dirOperand(at int, dir string, literal bool, what string) {
	switch {
	case !literal:
		c.flag(at, "%s names a directory computed at run time", what)
	case !c.a.checker.inside(c.path(dir)):
		c.flag(at, "%s works in %s, outside the workspace (its config, hooks or makefiles run)", what, dir)
	}
}

// --- search and text tools

var rgSpec = optSpec{short: "efgtTABCjmMErd", long: []string{
	"regexp", "file", "glob", "iglob", "type", "type-not", "type-add", "type-clear", "after-context",
	"before-context", "context", "threads", "max-count", "max-columns", "encoding", "replace", "max-depth",
	"pre", "pre-glob", "hostname-bin", "colors", "color", "sort", "sortr", "path-separator", "ignore-file",
	"max-filesize", "dfa-size-limit", "regex-size-limit", "context-separator", "field-match-separator",
	"field-context-separator", "hyperlink-format", "engine", "generate",
}}

func checkRg(c *call) {
	p := c.parse(rgSpec, 1)
	for _, o := range p.opts {
		if o.is(rgSpec, "pre", "hostname-bin") {
			c.flag(o.vat, "rg %s runs a program", o.name())
		}
	}
}

var sedSpec = optSpec{short: "efl", shortOpt: "i", long: []string{"expression", "file", "line-length"},
	longOpt: []string{"in-place"}, abbrev: true}

var sedFlags = strings.Fields(`-n -E -r -s -u -z -b quiet silent debug follow-symlinks posix regexp-extended
	separate unbuffered null-data binary help version sandbox -l line-length`)

func checkSed(c *call) {
	p := c.parse(sedSpec, 1)
	var script []string
	lit, at, fromOpts, sandbox, inPlace := true, 0, false, false, false
	for _, o := range p.opts {
		switch {
		case o.is(sedSpec, "-e", "expression"):
			script, lit, at, fromOpts = append(script, o.value), lit && o.lit, o.vat, true
		case o.is(sedSpec, "-f", "file"):
			c.flagOpaque(o.vat, "sed -f reads its script from a file Fido does not check")
			fromOpts = true
		case o.is(sedSpec, "-i", "in-place"):
			inPlace = true
			if strings.Contains(o.value, "/") {
				c.flagAs(ConcernOutside, o.at, "sed -i with a / in the backup name writes the backup into another directory")
			}
		case o.is(sedSpec, "sandbox"):
			sandbox = true
		case o.is(sedSpec, sedFlags...):
		default:
			c.flag(o.at, "sed %s is not an option Fido knows", o.name())
		}
	}
	files := p.operands
	if !fromOpts {
		if len(files) == 0 {
			return
		}
		at, lit, script = files[0], c.ws[files[0]].literal, []string{c.ws[files[0]].text}
		files = files[1:]
	}
	if !lit {
		c.flag(at, "the sed script is computed at run time")
	} else if !sandbox {
		s := readSedScript(strings.Join(script, "\n"))
		switch {
		case !s.ok:
			c.flag(at, "Fido cannot read this sed script (it asks rather than guess)")
		case s.exec:
			c.flag(at, "the sed script runs commands (the e command or the s///e flag)")
		}
		for _, w := range s.writes {
			c.write(at, w, true)
		}
	}
	if inPlace {
		for _, k := range files {
			c.writeWord(k)
		}
	}
}

var awkSpec = optSpec{short: "FfveilEW", shortOpt: "dopDL", long: []string{
	"field-separator", "file", "assign", "source", "include", "load", "exec",
}, longOpt: []string{"dump-variables", "pretty-print", "profile", "debug", "lint"}, abbrev: true, stop: true}

var awkFlags = strings.Fields(`-b -c -C -g -h -M -n -N -O -P -r -s -t -V -L characters-as-bytes traditional
	copyright gen-pot help bignum non-decimal-data use-lc-numeric optimize no-optimize posix re-interval
	lint-old version lint`)

func checkAwk(c *call) {
	p := c.parse(awkSpec, 1)
	var prog []string
	lit, at, fromOpts, sandbox := true, 0, false, false
	for _, o := range p.opts {
		switch {
		case o.is(awkSpec, "-F", "-v", "field-separator", "assign"):
		case o.is(awkSpec, "-e", "source"):
			prog, lit, at, fromOpts = append(prog, o.value), lit && o.lit, o.vat, true
		case o.is(awkSpec, "-f", "file", "-E", "exec"):
			c.flagOpaque(o.vat, "awk %s reads its program from a file Fido does not check", o.name())
			fromOpts = true
		case o.is(awkSpec, "-i", "include", "-l", "load"):
			c.flagOpaque(o.vat, "awk %s loads code Fido does not check", o.name())
		case o.is(awkSpec, "-S", "sandbox"):
			sandbox = true
		case o.is(awkSpec, "-W"):
			switch {
			case strings.HasPrefix(o.value, "sandbox"):
				sandbox = true
			case o.value == "version" || o.value == "v" || o.value == "usage" || o.value == "help":
			default:
				c.flag(o.vat, "awk -W %s is not analysed", o.value)
			}
		case o.is(awkSpec, "-d", "dump-variables"):
			c.awkDump(o, "awkvars.out")
		case o.is(awkSpec, "-o", "pretty-print"):
			c.awkDump(o, "awkprof.out")
		case o.is(awkSpec, "-p", "profile"):
			c.awkDump(o, "awkprof.out")
		case o.is(awkSpec, "-D", "debug"):
			c.flag(o.at, "awk --debug reads debugger commands")
		case o.is(awkSpec, awkFlags...):
		default:
			c.flag(o.at, "awk %s is not an option Fido knows", o.name())
		}
	}
	if !fromOpts {
		if len(p.operands) == 0 {
			return
		}
		at, lit, prog = p.operands[0], c.ws[p.operands[0]].literal, []string{c.ws[p.operands[0]].text}
	}
	if !lit {
		c.flag(at, "the awk program is computed at run time")
		return
	}
	if sandbox {
		return
	}
	r := readAwkProgram(strings.Join(prog, "\n"))
	switch {
	case !r.ok:
		c.flag(at, "Fido cannot read this awk program (it asks rather than guess)")
	case r.runs:
		c.flag(at, "the awk program runs commands (system(), a pipe to or from a command)")
	case r.computedWrite:
		c.flag(at, "the awk program writes to a file named at run time")
	}
	for _, w := range r.writes {
		c.write(at, w, true)
	}
}

func (c *call) awkDump(o option, def string) {
	if o.value == "" {
		c.write(o.at, def, true)
		return
	}
	c.writeOpt(o)
}

var sortSpec = optSpec{short: "kotST", long: []string{
	"key", "output", "field-separator", "buffer-size", "temporary-directory", "compress-program",
	"files0-from", "parallel", "batch-size", "random-source", "sort",
}, longOpt: []string{"check"}, abbrev: true}

func checkSort(c *call) {
	p := c.parse(sortSpec, 1)
	for _, o := range p.opts {
		switch {
		case o.is(sortSpec, "-o", "output"):
			c.writeOpt(o)
		case o.is(sortSpec, "compress-program"):
			c.flag(o.vat, "sort --compress-program runs a program")
		}
	}
}

func checkFind(c *call) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of find is computed at run time and may be -exec or -delete")
			}
			continue
		}
		switch w.text {
		case "-exec", "-execdir", "-ok", "-okdir":
			c.flag(i, "find %s runs a command", w.text)
		case "-delete":
			c.flagAs(ConcernDestructive, i, "find -delete deletes what it finds")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(c.ws) {
				c.writeWord(i + 1)
			}
		}
	}
}

// --- archives

var tarSpec = optSpec{short: "fCIFTXbgHKLNV", long: []string{
	"file", "directory", "use-compress-program", "info-script", "new-volume-script", "files-from",
	"exclude-from", "blocking-factor", "listed-incremental", "format", "starting-file", "label", "newer",
	"newer-mtime", "after-date", "volno-file", "rsh-command", "rmt-command", "to-command", "checkpoint-action",
	"index-file", "transform", "xform", "exclude", "owner", "group", "mode", "mtime", "record-size", "suffix",
	"tape-length", "strip-components", "quoting-style", "exclude-tag", "exclude-tag-under", "exclude-tag-all",
	"level", "warning", "owner-map", "group-map", "sort", "pax-option", "hole-detection", "sparse-version",
}, longOpt: []string{"checkpoint", "backup", "occurrence", "one-top-level", "atime-preserve", "totals"},
	flags: []string{"checkpoint", "extract", "exclude"}, abbrev: true}

// checkTar reads tar's options, the old form (tar xzf a.tgz) included.
func checkTar(c *call) {
	ws, origin := c.ws, make([]int, len(c.ws))
	for i := range origin {
		origin[i] = i
	}
	if len(ws) > 1 && ws[1].literal && ws[1].text != "" && !strings.HasPrefix(ws[1].text, "-") && isLetters(ws[1].text) {
		// tar cfC out.tar dir: each letter that takes a value takes the next word.
		nws, norigin := []word{ws[0]}, []int{0}
		next := 2
		for _, ch := range ws[1].text {
			nws, norigin = append(nws, word{text: "-" + string(ch), literal: true}), append(norigin, 1)
			if strings.ContainsRune(tarSpec.short, ch) && next < len(ws) {
				nws, norigin = append(nws, ws[next]), append(norigin, next)
				next++
			}
		}
		for ; next < len(ws); next++ {
			nws, norigin = append(nws, ws[next]), append(norigin, next)
		}
		ws, origin = nws, norigin
	}
	sub := &call{a: c.a, ws: ws, name: c.name, env: c.env, dir: c.dir}
	p := sub.parse(tarSpec, 1)
	extract, writesArchive := false, false
	var file *option
	var dirs []option
	force := false
	for i := range p.opts {
		o := p.opts[i]
		switch {
		case o.is(tarSpec, "-x", "extract", "get"):
			extract = true
		case o.is(tarSpec, "-c", "create", "-r", "append", "-u", "update", "-A", "catenate", "concatenate", "delete"):
			writesArchive = true
		case o.is(tarSpec, "-f", "file"):
			file = &p.opts[i]
		case o.is(tarSpec, "-C", "directory"):
			dirs = append(dirs, o)
		case o.is(tarSpec, "force-local"):
			force = true
		case o.is(tarSpec, "checkpoint-action", "to-command", "-I", "use-compress-program", "-F", "info-script",
			"new-volume-script", "rsh-command", "rmt-command"):
			sub.flag(o.vat, "tar %s runs a program", o.name())
		case o.is(tarSpec, "-P", "absolute-names"):
			sub.flag(o.at, "tar -P keeps absolute paths and .. of the archive")
		case o.is(tarSpec, "keep-directory-symlink"):
			sub.flag(o.at, "tar --keep-directory-symlink extracts through symlinks")
		case o.is(tarSpec, "index-file", "-g", "listed-incremental", "volno-file"):
			sub.writeOpt(o)
		}
	}
	if file != nil && strings.Contains(file.value, ":") && !force {
		sub.flag(file.vat, "tar -f host:file runs a remote shell")
	}
	if file != nil && writesArchive {
		sub.writeOpt(*file)
	}
	if extract {
		for _, d := range dirs {
			sub.writeOpt(d)
		}
		if len(dirs) == 0 {
			sub.writesHere(1)
		}
	}
	for _, f := range sub.out {
		f.at = origin[min(f.at, len(origin)-1)]
		c.out = append(c.out, f)
	}
}

func isLetters(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

var zipValues = set("-b -n -t -tt -O --out -P --password -Z -s -sp --temp-path --suffixes --split-size --compression-method")

func checkZip(c *call) {
	archive := false
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of zip is computed at run time and may be an option that runs or writes")
			}
			if !archive {
				c.writeWord(i)
				archive = true
			}
			continue
		}
		switch {
		case w.text == "-TT" || strings.HasPrefix(w.text, "-TT=") || strings.HasPrefix(w.text, "--unzip-command"):
			c.flag(i, "zip -TT runs a command to test the archive")
			if !strings.Contains(w.text, "=") {
				i++
			}
		case w.text == "-O" || w.text == "--out":
			if i+1 < len(c.ws) {
				c.writeWord(i + 1)
			}
			i++
		case zipValues[w.text]:
			i++
		case strings.HasPrefix(w.text, "-"):
		case !archive:
			c.writeWord(i)
			archive = true
		}
	}
}

func checkUnzip(c *call) {
	dir, list := false, false
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of unzip is computed at run time and may be an option that writes")
			}
			continue
		}
		switch {
		case w.text == "-d" && i+1 < len(c.ws):
			c.writeWord(i + 1)
			dir = true
			i++
		case strings.HasPrefix(w.text, "-d") && len(w.text) > 2:
			c.write(i, w.text[2:], true)
			dir = true
		case w.text == "-x":
			i = len(c.ws) // the rest are exclusions
		case strings.HasPrefix(w.text, "-") && strings.Contains(w.text, ":"):
			c.flag(i, "unzip -: extracts ../ paths of the archive")
		case strings.HasPrefix(w.text, "-") && strings.ContainsAny(w.text[1:], "lptvcZz"):
			list = true
		}
	}
	if !dir && !list {
		c.writesHere(1)
	}
}

// --- build tools

var makeSpec = optSpec{short: "CfEIoW", long: []string{
	"directory", "file", "makefile", "eval", "include-dir", "old-file", "assume-old", "what-if", "new-file", "assume-new",
}, longOpt: []string{"jobs", "load-average", "max-load", "output-sync", "debug", "shuffle", "jobserver-auth", "jobserver-style"},
	abbrev: true}

func checkMake(c *call) {
	p := c.parse(makeSpec, 1)
	for _, o := range p.opts {
		switch {
		case o.is(makeSpec, "-E", "eval"):
			c.flag(o.vat, "make --eval adds makefile text, which can run commands")
		case o.is(makeSpec, "-f", "file", "makefile"):
			if !o.lit || !c.a.checker.inside(c.path(o.value)) {
				c.flag(o.vat, "make %s reads a makefile outside the workspace (or named at run time)", o.name())
			}
		case o.is(makeSpec, "-C", "directory", "-I", "include-dir"):
			c.dirOperand(o.vat, o.value, o.lit, "make "+o.name())
		}
	}
	for _, k := range p.operands {
		if strings.Contains(c.ws[k].text, "=") {
			c.flag(k, "make %s overrides a make variable, which can change what its recipes run", c.ws[k].text)
		}
	}
	for _, v := range c.env {
		c.flag(c.last(), "%s=… reaches make's variables, which can change what its recipes run", v)
	}
}

// goValues are the go command's flags that always take a value.
var goValues = set(`C exec toolexec ldflags gcflags asmflags gccgoflags compiler overlay modfile pgo o p tags mod
	coverpkg covermode run bench count cpu parallel timeout benchtime coverprofile cpuprofile memprofile
	memprofilerate blockprofile blockprofilerate mutexprofile mutexprofilefraction trace outputdir fuzz
	fuzztime fuzzminimizetime list shuffle skip vet vettool installsuffix pkgdir buildmode`)

// goWrites are go flags whose value is a file or directory it writes.
var goWrites = set(`o coverprofile cpuprofile memprofile blockprofile mutexprofile trace outputdir pkgdir`)

func checkGo(c *call) {
	i := 1
	for ; i < len(c.ws) && c.ws[i].literal && strings.HasPrefix(c.ws[i].text, "-"); i++ {
		name, v, hasEq := strings.Cut(strings.TrimLeft(c.ws[i].text, "-"), "=")
		if name != "C" {
			break
		}
		lit := true
		if !hasEq && i+1 < len(c.ws) {
			i++
			v, lit = c.ws[i].text, c.ws[i].literal
		}
		c.dirOperand(i, v, lit, "go -C")
	}
	if i >= len(c.ws) {
		return
	}
	if !c.ws[i].literal {
		c.flag(i, "the go subcommand is computed at run time")
		return
	}
	sub := c.ws[i].text
	switch sub {
	case "generate":
		c.flag(i, "go generate runs the commands of //go:generate lines")
		return
	case "env":
		for k := i + 1; k < len(c.ws); k++ {
			if t := strings.TrimLeft(c.ws[k].text, "-"); strings.HasPrefix(c.ws[k].text, "-") && (t == "w" || t == "u") {
				c.flagAs(ConcernOutside, k, "go env -%s writes Go's user configuration (GOFLAGS can add -toolexec)", t)
			}
		}
		return
	case "clean":
		for k := i + 1; k < len(c.ws); k++ {
			switch t := strings.TrimLeft(c.ws[k].text, "-"); t {
			case "cache", "modcache", "fuzzcache":
				c.flagAs(ConcernOutside, k, "go clean -%s deletes Go's caches outside the workspace", t)
			}
		}
	case "build", "install", "run", "test", "vet", "list", "get", "tool":
	default:
		return
	}
	for k := i + 1; k < len(c.ws); k++ {
		w := c.ws[k]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(k, "an argument of go is computed at run time and may be -exec or -toolexec")
			}
			if sub == "run" {
				return
			}
			continue
		}
		if !strings.HasPrefix(w.text, "-") || w.text == "-" {
			if sub == "run" {
				return // the rest are the program's arguments
			}
			continue
		}
		if w.text == "-args" || w.text == "--args" || w.text == "--" {
			return
		}
		name, v, hasEq := strings.Cut(strings.TrimLeft(w.text, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		at, lit := k, true
		if !hasEq && goValues[name] && k+1 < len(c.ws) {
			k++
			at, v, lit = k, c.ws[k].text, c.ws[k].literal
		}
		switch {
		case name == "exec" || name == "toolexec" || name == "vettool" || name == "overlay" || name == "gccgoflags":
			c.flag(at, "go -%s runs programs or code from outside the sources", name)
		case name == "ldflags" && (!lit || strings.Contains(v, "extld")):
			c.flag(at, "go -ldflags with -extld runs another linker program")
		case name == "modfile":
			if !lit || !c.a.checker.inside(c.path(v)) {
				c.flag(at, "go -modfile reads a go.mod outside the workspace")
			}
		case goWrites[name]:
			c.write(at, v, lit)
		}
	}
}

func checkNpm(c *call) {
	sub, exec, global := "", c.name == "npx" || c.name == "bunx", false
	var subAt int
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of %s is computed at run time and may be an option that runs a program", c.name)
			}
			continue
		}
		if w.text == "--" {
			break
		}
		if !strings.HasPrefix(w.text, "-") {
			if sub == "" {
				sub, subAt = w.text, i
			}
			continue
		}
		name, v, hasEq := strings.Cut(strings.TrimLeft(w.text, "-"), "=")
		switch name {
		case "c", "call", "shell":
			exec = true
			c.flag(i, "%s %s runs a shell command line", c.name, w.text)
		case "script-shell", "node-options", "userconfig", "globalconfig", "e", "eval", "p", "print":
			c.flag(i, "%s %s runs a program or reads options Fido does not check", c.name, w.text)
		case "g", "global":
			global = true
		case "location":
			if !hasEq && i+1 < len(c.ws) {
				i++
				v = c.ws[i].text
			}
			global = global || v == "global"
		case "prefix", "C", "cwd", "dir":
			lit := true
			if !hasEq && i+1 < len(c.ws) {
				i++
				v, lit = c.ws[i].text, c.ws[i].literal
			}
			c.dirOperand(i, v, lit, c.name+" --"+name)
		}
	}
	switch sub {
	case "install", "i", "add", "uninstall", "remove", "rm", "un", "r", "link", "ln", "update", "up", "upgrade":
		if global {
			c.flagAs(ConcernOutside, subAt, "%s %s -g writes packages outside the workspace", c.name, sub)
		}
	case "config", "set":
		c.flagAs(ConcernOutside, subAt, "%s %s can write its configuration, which can run programs", c.name, sub)
	}
	_ = exec
}

func checkDeno(c *call) {
	if len(c.ws) > 1 && c.ws[1].literal && c.ws[1].text == "eval" {
		c.flag(1, "deno eval runs the code in its argument")
	}
	for i := 1; i < len(c.ws); i++ {
		if !c.ws[i].literal && c.a.mayBeOption(c.ws[i]) {
			c.flag(i, "an argument of deno is computed at run time and may be an option")
		}
	}
}

// --- pagers and editors

func checkLess(c *call) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) || strings.HasPrefix(w.text, "+") {
				c.flag(i, "an argument of less is computed at run time and may be a command")
			}
			continue
		}
		t := w.text
		switch {
		case t == "--":
			return
		case strings.HasPrefix(t, "+"):
			c.flag(i, "less %s runs less commands at start (! runs a shell)", t)
		case strings.HasPrefix(t, "--lesskey") || t == "-k" || strings.HasPrefix(t, "-k"):
			c.flag(i, "less %s reads key bindings, which can run commands", t)
		case t == "-o" || t == "-O" || strings.HasPrefix(t, "--log-file") || strings.HasPrefix(t, "--LOG-FILE"):
			if _, v, ok := strings.Cut(t, "="); ok {
				c.write(i, v, true)
			} else if i+1 < len(c.ws) {
				c.writeWord(i + 1)
				i++
			}
		case strings.HasPrefix(t, "-o") || strings.HasPrefix(t, "-O"):
			c.write(i, t[2:], true)
		}
	}
}

func checkMan(c *call) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of man is computed at run time and may be an option")
			}
			continue
		}
		t := w.text
		switch {
		case strings.HasPrefix(t, "--pager") || strings.HasPrefix(t, "--html") || strings.HasPrefix(t, "--gxditview") ||
			strings.HasPrefix(t, "--browser") || strings.HasPrefix(t, "--preprocessor"):
			c.flag(i, "man %s runs another program", t)
		case strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t, "PHXp"):
			c.flag(i, "man %s runs another program", t)
		}
	}
}

// checkEditor: an editor run by a command reads its commands from its
// arguments (-c, +cmd, -S …) or from its input (ex mode, keys from a
// here-document), and :! runs a shell; only --version and --help run
// unasked.
func checkEditor(c *call) {
	if len(c.ws) == 2 && c.ws[1].literal && (c.ws[1].text == "--version" || c.ws[1].text == "--help" || c.ws[1].text == "-h") {
		return
	}
	c.flag(min(1, c.last()), "%s runs editor commands from its arguments or input (:! runs a shell) and writes files", c.name)
}

// checkDatabaseClient: psql, mysql: \! and system run a shell.
func checkDatabaseClient(c *call) {
	if len(c.ws) == 2 && c.ws[1].literal && (c.ws[1].text == "--version" || c.ws[1].text == "--help" || c.ws[1].text == "-V") {
		return
	}
	c.flag(min(1, c.last()), "%s runs client commands from its arguments or input (\\! runs a shell)", c.name)
}

func checkNetcat(c *call) {
	for i := 1; i < len(c.ws); i++ {
		t := c.ws[i].text
		if !c.ws[i].literal || strings.HasPrefix(t, "--") && (strings.Contains(t, "exec") || strings.Contains(t, "sh-")) ||
			strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t, "ec") {
			c.flag(i, "%s %s runs a program for the connection", c.name, t)
		}
	}
}

func checkPandoc(c *call) {
	spec := optSpec{short: "oFLtfwMVdA", long: []string{"output", "filter", "lua-filter", "to", "from", "read", "write",
		"metadata", "variable", "defaults", "extract-media", "data-dir", "template", "resource-path"}, abbrev: true}
	for _, o := range c.parse(spec, 1).opts {
		switch {
		case o.is(spec, "-F", "filter", "-L", "lua-filter", "-d", "defaults", "data-dir"):
			c.flag(o.vat, "pandoc %s runs a filter program or reads options Fido does not check", o.name())
		case o.is(spec, "-o", "output", "extract-media"):
			c.writeOpt(o)
		}
	}
}

func checkShuf(c *call) {
	spec := optSpec{short: "oinz", long: []string{"output", "input-range", "head-count", "random-source"}, abbrev: true}
	if o, ok := c.parse(spec, 1).has(spec, "-o", "output"); ok {
		c.writeOpt(o)
	}
}

func checkUniq(c *call) {
	spec := optSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}, longOpt: []string{"all-repeated", "group"}, abbrev: true}
	if p := c.parse(spec, 1); len(p.operands) > 1 {
		c.writeWord(p.operands[1])
	}
}

func checkIconv(c *call) {
	spec := optSpec{short: "oft", long: []string{"output", "from-code", "to-code"}, abbrev: true}
	if o, ok := c.parse(spec, 1).has(spec, "-o", "output"); ok {
		c.writeOpt(o)
	}
}

// --- interpreters: code given on the command line

// interpreterCode reads the options of an interpreter up to its script:
// code is the letters of options whose value is code to run, values the
// other options with a value.
func (c *call) interpreterCode(code, values string, long map[string]bool) {
	if k := c.interpreterScript(code, values, long); k >= len(c.ws) || c.ws[k].literal && c.ws[k].text == "-" {
		c.readsProgram()
	}
}

// readsProgram flags an interpreter run without a script: it reads its
// program from its input (a here-document, a pipe).
func (c *call) readsProgram() {
	for _, w := range c.ws[1:] {
		switch w.text {
		case "--version", "-V", "--help", "-h", "-v":
			return
		}
	}
	c.flag(c.last(), "%s without a script reads its program from its input", c.name)
}

func (c *call) interpreterScript(code, values string, long map[string]bool) (script int) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of %s is computed at run time and may be an option that runs code", c.name)
			}
			return i
		}
		t := w.text
		if t == "--" {
			return i + 1
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			return i
		}
		if strings.HasPrefix(t, "--") {
			name, _, _ := strings.Cut(t[2:], "=")
			if long[name] {
				c.flag(i, "%s --%s runs code given on the command line or loads code Fido does not check", c.name, name)
			}
			if strings.HasPrefix(name, "inspect") {
				c.flag(i, "%s --%s opens a debugger port that runs code", c.name, name)
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			ch := t[j]
			if strings.IndexByte(code, ch) >= 0 {
				c.flag(i, "%s -%c runs the code in its argument", c.name, ch)
				return len(c.ws)
			}
			if strings.IndexByte(values, ch) >= 0 {
				if j == len(t)-1 {
					i++
				}
				break
			}
		}
	}
	return len(c.ws)
}

func checkPython(c *call) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of %s is computed at run time and may be -c", c.name)
			}
			return
		}
		t := w.text
		if t == "-" || t == "--" && (i+1 >= len(c.ws) || c.ws[i+1].text == "-") {
			c.readsProgram()
			return
		}
		if !strings.HasPrefix(t, "-") || t == "--" {
			return
		}
		if strings.HasPrefix(t, "--") {
			continue
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'c':
				c.flag(i, "%s -c runs the code in its argument", c.name)
				return
			case 'm':
				return // a module; the rest are its arguments
			case 'W', 'X':
				if j == len(t)-1 {
					i++
				}
				j = len(t)
			}
		}
	}
	c.readsProgram()
}

func checkNode(c *call) {
	c.interpreterCode("epr", "C", map[string]bool{
		"eval": true, "print": true, "require": true, "import": true, "loader": true, "experimental-loader": true,
		"env-file": true, "experimental-policy": true, "title": false, "input-type": false, "conditions": false,
	})
}

func checkPerl(c *call) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if c.a.mayBeOption(w) {
				c.flag(i, "an argument of perl is computed at run time and may be -e")
			}
			return
		}
		t := w.text
		if t == "-" || t == "--" && i+1 >= len(c.ws) {
			c.readsProgram()
			return
		}
		if !strings.HasPrefix(t, "-") || t == "--" {
			return
		}
		switch {
		case !strings.HasPrefix(t, "-M") && !strings.HasPrefix(t, "-m") && !strings.HasPrefix(t, "-I") && strings.ContainsAny(t[1:], "eE"):
			c.flag(i, "perl %s runs the code in its argument", t)
			return
		case strings.HasPrefix(t, "-M") || strings.HasPrefix(t, "-m"):
			mod := strings.TrimLeft(t[2:], "-")
			if mod == "" && i+1 < len(c.ws) {
				i++
				mod = c.ws[i].text
			}
			for _, r := range mod {
				if !(r == ':' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
					c.flag(i, "perl %s can run code in its argument", t)
					break
				}
			}
		case strings.HasPrefix(t, "-d"):
			c.flag(i, "perl -d runs a debugger")
		case strings.HasPrefix(t, "-I") && len(t) == 2:
			i++
		}
	}
	c.readsProgram()
}

func checkRuby(c *call) {
	c.interpreterCode("e", "IrCEF", map[string]bool{})
}

func checkPhp(c *call) {
	c.interpreterCode("rBREFdcz", "ftS", map[string]bool{})
}

func checkLua(c *call) {
	c.interpreterCode("e", "l", map[string]bool{})
}

func checkRscript(c *call) {
	for i := 1; i < len(c.ws); i++ {
		if t := c.ws[i].text; t == "-e" || strings.HasPrefix(t, "--expr") || !c.ws[i].literal && c.a.mayBeOption(c.ws[i]) {
			c.flag(i, "Rscript -e runs the code in its argument")
		}
	}
}

// --- network and copies

var rsyncSpec = optSpec{short: "eTBfM", long: []string{
	"rsh", "rsync-path", "log-file", "write-batch", "only-write-batch", "read-batch", "backup-dir", "temp-dir",
	"partial-dir", "compare-dest", "copy-dest", "link-dest", "files-from", "exclude-from", "include-from",
	"exclude", "include", "filter", "config", "password-file", "remote-option", "chmod", "chown", "usermap",
	"groupmap", "suffix", "max-size", "min-size", "timeout", "contimeout", "port", "sockopts", "out-format",
	"log-file-format", "bwlimit", "block-size", "checksum-choice", "compress-choice", "info", "debug",
	"modify-window", "iconv", "max-delete", "max-alloc", "protocol", "early-input", "stop-after", "stop-at",
	"skip-compress", "address", "compress-level", "checksum-seed",
}, abbrev: true}

func checkRsync(c *call) {
	p := c.parse(rsyncSpec, 1)
	removes := false
	for _, o := range p.opts {
		switch {
		case o.is(rsyncSpec, "-e", "rsh", "rsync-path", "daemon", "config", "-M", "remote-option", "early-input"):
			c.flag(o.vat, "rsync %s runs a program or sends commands", o.name())
		case o.is(rsyncSpec, "log-file", "write-batch", "only-write-batch", "backup-dir", "-T", "temp-dir", "partial-dir"):
			c.writeOpt(o)
		case o.is(rsyncSpec, "remove-source-files"):
			removes = true
		}
	}
	if len(p.operands) < 2 {
		return
	}
	dest := p.operands[len(p.operands)-1]
	if t := c.ws[dest].text; remotePath(t) {
		c.flagAs(ConcernNetwork, dest, "rsync writes to another machine (%s)", t)
	} else {
		c.writeWord(dest)
	}
	if removes {
		for _, k := range p.operands[:len(p.operands)-1] {
			c.writeWord(k)
		}
	}
}

// remotePath: host:path or a URL, not a local path.
func remotePath(t string) bool {
	if strings.Contains(t, "://") {
		return true
	}
	i := strings.IndexByte(t, ':')
	return i > 0 && !strings.Contains(t[:i], "/")
}

// sshSafeOptions are the -o options that cannot run a program, load a
// library or write a file.
var sshSafeOptions = set(`batchmode connecttimeout connectionattempts stricthostkeychecking loglevel port user
	serveraliveinterval serveralivecountmax identitiesonly identityfile passwordauthentication
	pubkeyauthentication kbdinteractiveauthentication preferredauthentications compression requesttty
	hostname addressfamily checkhostip tcpkeepalive forwardagent forwardx11 exitonforwardfailure
	numberofpasswordprompts updatehostkeys hashknownhosts visualhostkey ciphers macs kexalgorithms
	hostkeyalgorithms pubkeyacceptedkeytypes pubkeyacceptedalgorithms sendenv setenv remotecommand
	gssapiauthentication verifyhostkeydns`)

var sshSpec = optSpec{short: "BbcDEeFIiJLlmOopQRSWw"}

func (c *call) sshOptions(spec optSpec, p parsedArgs) {
	for _, o := range p.opts {
		switch {
		case o.is(spec, "-o"):
			name := ""
			if f := strings.FieldsFunc(o.value, func(r rune) bool { return r == '=' || r == ' ' || r == '\t' }); len(f) > 0 {
				name = strings.ToLower(f[0])
			}
			if !o.lit || !sshSafeOptions[name] {
				c.flag(o.vat, "%s -o %s can run a program, load a library or write a file", c.name, o.value)
			}
		case o.is(spec, "-F"):
			if o.value != "/dev/null" {
				c.flag(o.vat, "%s -F reads a config file, which can run programs (ProxyCommand)", c.name)
			}
		case o.is(spec, "-E"):
			c.writeOpt(o)
		case o.is(spec, "-S"):
			if c.name != "ssh" || o.value != "none" {
				c.flag(o.vat, "%s -S uses another program or control socket", c.name)
			}
		case o.is(spec, "-D") && c.name == "sftp", o.is(spec, "-b") && c.name == "sftp":
			c.flag(o.vat, "sftp %s runs a program or batch commands (! runs a shell)", o.name())
		}
	}
}

func checkSSH(c *call) {
	c.sshOptions(sshSpec, c.parse(sshSpec, 1))
}

var scpSpec = optSpec{short: "cFiJlPoSDX"}

func checkScp(c *call) {
	p := c.parse(scpSpec, 1)
	c.sshOptions(scpSpec, p)
	if len(p.operands) >= 2 {
		if dest := p.operands[len(p.operands)-1]; !remotePath(c.ws[dest].text) {
			c.writeWord(dest)
		}
	}
}

var sftpSpec = optSpec{short: "BbcDFiJlPoRSsX"}

func checkSftp(c *call) {
	c.sshOptions(sftpSpec, c.parse(sftpSpec, 1))
}

var curlSpec = optSpec{short: "AbcCdDeEFhHKmoPQrtTuUwxXyYz", long: []string{
	"data", "data-binary", "data-raw", "data-urlencode", "data-ascii", "header", "user-agent", "user", "url", "request",
	"proxy", "cookie", "form", "form-string", "referer", "max-time", "connect-timeout", "retry", "retry-delay",
	"retry-max-time", "range", "cert", "key", "cacert", "capath", "resolve", "connect-to", "interface", "output",
	"dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "libcurl", "etag-save", "etag-compare", "hsts",
	"alt-svc", "output-dir", "config", "write-out", "upload-file", "continue-at", "proxy-user", "max-filesize",
	"limit-rate", "speed-limit", "speed-time", "time-cond", "variable", "expand-url", "json", "oauth2-bearer",
	"aws-sigv4", "quote", "telnet-option", "ciphers", "proto", "proto-redir", "unix-socket", "abstract-unix-socket",
}, abbrev: true}

func checkCurl(c *call) {
	p := c.parse(curlSpec, 1)
	named, outDir := false, false
	for _, o := range p.opts {
		switch {
		case o.is(curlSpec, "-K", "config"):
			c.flag(o.vat, "curl -K reads options from a file Fido does not check")
		case o.is(curlSpec, "-o", "output"):
			c.writeOpt(o)
		case o.is(curlSpec, "-D", "dump-header", "-c", "cookie-jar", "trace", "trace-ascii", "stderr", "libcurl",
			"etag-save", "hsts", "alt-svc"):
			c.writeOpt(o)
		case o.is(curlSpec, "output-dir"):
			c.writeOpt(o)
			outDir = true
		case o.is(curlSpec, "-O", "remote-name", "remote-name-all", "-J", "remote-header-name"):
			named = true
		case o.is(curlSpec, "-w", "write-out"):
			if !o.lit || strings.Contains(o.value, "%output{") || strings.HasPrefix(o.value, "@") {
				c.flag(o.vat, "curl -w can write to a file")
			}
		}
	}
	if named && !outDir {
		c.writesHere(1)
	}
}

var wgetSpec = optSpec{short: "oaeiBtOTwQPUlDARXI", long: []string{
	"output-document", "output-file", "append-output", "directory-prefix", "execute", "config", "use-askpass",
	"save-cookies", "warc-file", "rejected-log", "hsts-file", "input-file", "base", "tries", "timeout", "wait",
	"quota", "user-agent", "header", "post-data", "post-file", "level", "domains", "accept", "reject", "user",
	"password", "load-cookies", "exclude-directories", "include-directories", "method", "body-data", "body-file",
}, abbrev: true}

func checkWget(c *call) {
	p := c.parse(wgetSpec, 1)
	document := false
	for _, o := range p.opts {
		switch {
		case o.is(wgetSpec, "-e", "execute", "config", "use-askpass"):
			c.flag(o.vat, "wget %s runs commands or reads options Fido does not check", o.name())
		case o.is(wgetSpec, "-O", "output-document"):
			c.writeOpt(o)
			document = true
		case o.is(wgetSpec, "-o", "output-file", "-a", "append-output", "save-cookies", "warc-file", "rejected-log",
			"hsts-file", "-P", "directory-prefix"):
			c.writeOpt(o)
		}
	}
	if !document {
		c.writesHere(1)
	}
}

func checkTee(c *call) {
	spec := optSpec{longOpt: []string{"output-error"}, abbrev: true}
	for _, k := range c.parse(spec, 1).operands {
		c.writeWord(k)
	}
}

var cpSpec = optSpec{short: "tS", long: []string{"target-directory", "suffix", "no-preserve", "sparse"},
	longOpt: []string{"backup", "preserve", "reflink", "update", "context"}, abbrev: true}

// copyTarget writes the target directory (-t) or the last operand.
func (c *call) copyTarget(spec optSpec, p parsedArgs) (sources []int) {
	if o, ok := p.has(spec, "-t", "target-directory"); ok {
		c.writeOpt(o)
		return p.operands
	}
	if len(p.operands) == 1 {
		c.writesHere(p.operands[0])
		return p.operands
	}
	if len(p.operands) > 1 {
		c.writeWord(p.operands[len(p.operands)-1])
		return p.operands[:len(p.operands)-1]
	}
	return nil
}

func checkCp(c *call) {
	p := c.parse(cpSpec, 1)
	sources := c.copyTarget(cpSpec, p)
	if _, ok := p.has(cpSpec, "-s", "symbolic-link"); ok {
		c.linkTargets(sources)
	}
}

func checkMv(c *call) {
	p := c.parse(cpSpec, 1)
	if o, ok := p.has(cpSpec, "-t", "target-directory"); ok {
		c.writeOpt(o)
	}
	for _, k := range p.operands {
		c.writeWord(k) // the sources are removed
	}
}

func checkLn(c *call) {
	spec := optSpec{short: "tS", long: []string{"target-directory", "suffix"}, longOpt: []string{"backup"}, abbrev: true}
	p := c.parse(spec, 1)
	targets := c.copyTarget(spec, p)
	if _, ok := p.has(spec, "-s", "symbolic"); ok {
		c.linkTargets(targets)
	}
}

// linkTargets: a symbolic link made in the workspace must point inside it,
// or writes through it escape.
func (c *call) linkTargets(targets []int) {
	for _, k := range targets {
		w := c.ws[k]
		if !w.literal || !c.a.checker.inside(c.path(w.text)) {
			c.flag(k, "%s makes a symbolic link to %s, outside the workspace (writes through it escape)", c.name, w.text)
		}
	}
}

func checkInstall(c *call) {
	spec := optSpec{short: "tSmog", long: []string{"target-directory", "suffix", "mode", "owner", "group", "strip-program"},
		longOpt: []string{"backup", "context"}, abbrev: true}
	p := c.parse(spec, 1)
	if o, ok := p.has(spec, "strip-program"); ok {
		c.flag(o.vat, "install --strip-program runs a program")
	}
	if _, ok := p.has(spec, "-d", "directory"); ok {
		for _, k := range p.operands {
			c.writeWord(k)
		}
		return
	}
	c.copyTarget(spec, p)
}

func checkDd(c *call) {
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			c.flag(i, "an operand of dd is computed at run time")
			continue
		}
		if v, ok := strings.CutPrefix(w.text, "of="); ok {
			c.write(i, v, true)
		}
	}
}

// checkWritesOperands: every operand is a file the command writes.
func checkWritesOperands(spec optSpec) func(*call) {
	return func(c *call) {
		for _, k := range c.parse(spec, 1).operands {
			c.writeWord(k)
		}
	}
}

func checkChmod(c *call) {
	spec := optSpec{long: []string{"reference", "from"}, abbrev: true}
	// chmod -x file: a mode that looks like an option.
	ws := append([]word(nil), c.ws...)
	mode := false
	if c.name == "chmod" {
		for i := 1; i < len(ws); i++ {
			if t := ws[i].text; ws[i].literal && len(t) > 1 && t[0] == '-' && strings.Trim(t[1:], "rwxXstugo") == "" {
				ws[i] = word{text: "u" + t, literal: true}
				mode = true
			}
		}
	}
	sub := &call{a: c.a, ws: ws, name: c.name, dir: c.dir}
	p := sub.parse(spec, 1)
	ops := p.operands
	if _, ok := p.has(spec, "reference"); !ok && len(ops) > 0 && !(mode && len(ops) == 1) {
		ops = ops[1:] // the mode or owner
	}
	for _, k := range ops {
		sub.writeWord(k)
	}
	c.out = append(c.out, sub.out...)
}

func checkPatch(c *call) {
	spec := optSpec{short: "BDdFgioprVYz", long: []string{
		"prefix", "ifdef", "directory", "fuzz", "get", "input", "output", "strip", "reject-file", "version-control",
		"basename-prefix", "suffix", "quoting-style", "reject-format",
	}, abbrev: true}
	p := c.parse(spec, 1)
	for _, o := range p.opts {
		switch {
		case o.is(spec, "-d", "directory"):
			c.dirOperand(o.vat, o.value, o.lit, "patch -d")
		case o.is(spec, "-o", "output", "-r", "reject-file"):
			c.writeOpt(o)
		case o.is(spec, "-B", "prefix", "-Y", "basename-prefix", "-z", "suffix"):
			if strings.Contains(o.value, "/") || !o.lit {
				c.write(o.vat, o.value, o.lit)
			}
		}
	}
	if len(p.operands) > 0 {
		c.writeWord(p.operands[0])
	}
}

func checkSplit(c *call) {
	spec := optSpec{short: "abCdlnt", long: []string{
		"suffix-length", "additional-suffix", "bytes", "line-bytes", "lines", "number", "separator", "filter",
	}, longOpt: []string{"numeric-suffixes", "hex-suffixes"}, abbrev: true}
	p := c.parse(spec, 1)
	if o, ok := p.has(spec, "filter"); ok {
		c.flag(o.vat, "split --filter runs a shell command")
	}
	if len(p.operands) > 1 {
		c.writeWord(p.operands[1])
	} else {
		c.writesHere(1)
	}
}

func checkCsplit(c *call) {
	spec := optSpec{short: "bfn", long: []string{"suffix-format", "prefix", "digits"}, abbrev: true}
	p := c.parse(spec, 1)
	if o, ok := p.has(spec, "-f", "prefix"); ok {
		c.writeOpt(o)
	} else {
		c.writesHere(1)
	}
}

func checkCompress(c *call) {
	spec := optSpec{short: "oSbT", long: []string{"suffix", "output-dir-flat", "output-dir-mirror", "threads", "memlimit"}, abbrev: true}
	p := c.parse(spec, 1)
	toStdout := false
	for _, o := range p.opts {
		switch {
		case o.is(spec, "-c", "stdout", "to-stdout", "-t", "test", "-l", "list"):
			toStdout = true
		case o.is(spec, "-o", "output-dir-flat", "output-dir-mirror") && c.name != "xz" && c.name != "unxz":
			c.writeOpt(o)
			toStdout = true
		}
	}
	if !toStdout {
		for _, k := range p.operands {
			c.writeWord(k)
		}
	}
}

func checkSqlite(c *call) {
	db, sql := false, false
	for i := 1; i < len(c.ws); i++ {
		w := c.ws[i]
		switch {
		case w.literal && (w.text == "-init" || w.text == "--init"):
			c.flag(i, "sqlite3 -init runs commands from a file")
			i++
		case w.literal && (w.text == "-cmd" || w.text == "--cmd"):
			if i+1 < len(c.ws) {
				i++
				c.sqliteText(i)
				sql = true
			}
		case w.literal && strings.HasPrefix(w.text, "-"):
			switch strings.TrimLeft(w.text, "-") {
			case "separator", "nullvalue", "newline", "mmap", "vfs", "maxsize", "pagecache", "lookaside", "heap", "escape":
				i++
			}
		case !db:
			c.writeWord(i)
			db = true
		default:
			c.sqliteText(i)
			sql = true
		}
	}
	if !sql {
		c.flag(c.last(), "sqlite3 without SQL reads commands (.shell, .system) from its input")
	}
}

func (c *call) sqliteText(i int) {
	w := c.ws[i]
	if !w.literal {
		c.flag(i, "sqlite3 runs SQL computed at run time")
		return
	}
	low := strings.ToLower(w.text)
	for _, l := range strings.Split(low, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), ".") {
			c.flag(i, "sqlite3 dot-commands can run programs or write files")
			return
		}
	}
	for _, s := range []string{"load_extension", "writefile", "edit(", "attach", "vacuum into", ".shell", ".system"} {
		if strings.Contains(low, s) {
			c.flag(i, "sqlite3 %s can load code or write files", s)
			return
		}
	}
}

// --- builtins that take variable names or run callbacks

func checkTest(c *call) {
	for i := 1; i < len(c.ws); i++ {
		if t := c.ws[i].text; c.ws[i].literal && (t == "-v" || t == "-R") && i+1 < len(c.ws) {
			if !isVarRef(c.ws[i+1]) {
				c.flag(i+1, "%s %s evaluates a subscript at run time", c.name, t)
			}
		}
	}
}

// varName checks a word that names a variable the command assigns.
func (c *call) varName(i int) {
	w := c.ws[i]
	switch {
	case !w.literal:
		c.flag(i, "%s assigns a variable named at run time", c.name)
	case !isName(w.text) && !isVarRef(w):
		c.flag(i, "%s assigns %s, whose subscript is evaluated at run time", c.name, w.text)
	default:
		name, _, _ := strings.Cut(w.text, "[")
		if dangerousVariable(name) {
			c.flag(i, "%s sets %s", c.name, name)
		}
	}
}

func checkRead(c *call) {
	spec := optSpec{short: "adinNptu"}
	p := c.parse(spec, 1)
	for _, o := range p.opts {
		if o.is(spec, "-a") {
			c.varName(o.vat)
		}
	}
	for _, k := range p.operands {
		c.varName(k)
	}
}

func checkMapfile(c *call) {
	spec := optSpec{short: "CcdnOsu"}
	p := c.parse(spec, 1)
	if o, ok := p.has(spec, "-C"); ok {
		c.flag(o.vat, "%s -C runs a callback command", c.name)
	}
	for _, k := range p.operands {
		c.varName(k)
	}
}

func checkPrintf(c *call) {
	if len(c.ws) > 2 && c.ws[1].literal && c.ws[1].text == "-v" {
		c.varName(2)
	} else if len(c.ws) > 1 && !c.ws[1].literal && c.a.mayBeOption(c.ws[1]) {
		c.flag(1, "the first argument of printf is computed at run time and may be -v")
	}
}

func checkGetopts(c *call) {
	if len(c.ws) > 2 {
		c.varName(2)
	}
}

func checkWait(c *call) {
	for i := 1; i+1 < len(c.ws); i++ {
		if c.ws[i].text == "-p" {
			c.varName(i + 1)
		}
	}
}

func checkUnset(c *call) {
	for i := 1; i < len(c.ws); i++ {
		if w := c.ws[i]; !w.literal || strings.Contains(w.text, "[") && !isVarRef(w) {
			c.flag(i, "unset %s evaluates a subscript at run time", w.text)
		}
	}
}

func checkCompgen(c *call) {
	spec := optSpec{short: "AGWFCXPSo"}
	p := c.parse(spec, 1)
	for _, o := range p.opts {
		switch {
		case o.is(spec, "-C"):
			c.flag(o.vat, "%s -C runs a command", c.name)
		case o.is(spec, "-W") && (!o.lit || strings.ContainsAny(o.value, "$`")):
			c.flag(o.vat, "%s -W expands its word list, running the commands in it", c.name)
		}
	}
}

func checkHash(c *call) {
	for i := 1; i < len(c.ws); i++ {
		if t := c.ws[i].text; strings.HasPrefix(t, "-") && strings.Contains(t, "p") || !c.ws[i].literal {
			c.flag(i, "hash -p changes which program a command name runs")
		}
	}
}

func checkCd(c *call) {
	// Where a second cd, or one in a loop or function, ends up depends on
	// where the first left the shell: only one plain change is followed.
	c.a.cds++
	if c.a.cds > 1 || c.a.repeated() {
		c.flag(c.last(), "%s changes directory again or in a loop or function (Fido cannot tell where it ends)", c.name)
	}
	var dirs []int
	for i := 1; i < len(c.ws); i++ {
		if t := c.ws[i].text; c.ws[i].literal && strings.HasPrefix(t, "-") && t != "-" {
			continue
		}
		dirs = append(dirs, i)
	}
	if len(dirs) == 0 {
		if c.name == "cd" {
			c.flag(c.last(), "cd without a directory goes to the home directory, outside the workspace")
		}
		return
	}
	for _, k := range dirs {
		w := c.ws[k]
		switch {
		case !w.literal:
			c.flag(k, "%s to a directory computed at run time", c.name)
		case w.text == "-" || strings.HasPrefix(w.text, "+") && c.name == "pushd":
			c.flag(k, "%s %s goes back to a directory Fido cannot tell", c.name, w.text)
		case !c.a.checker.inside(w.text):
			c.flag(k, "%s %s leaves the workspace (commands after it run there)", c.name, w.text)
		}
	}
}

func checkDeclCommand(c *call) {
	c.flag(c.last(), "%s run as a command (after command or builtin) is not analysed", c.name)
}
