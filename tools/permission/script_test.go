package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seven-line script of issue 31: "Always …" used to propose its first
// word (set), and the same script asked again after that rule was saved.
const sevenLines = `set -euo pipefail
cd sub
go vet ./...
go test ./...
mkdir -p build
go build -o build/app .
rm -rf build/tmp`

func TestProposalForMultiLineScriptMatchesIt(t *testing.T) {
	root := t.TempDir()
	d := Checker{Root: root}.Decide(sevenLines)
	require.Equal(t, Ask, d.Verdict)
	assert.Equal(t, "set", d.Suggest, "the first uncovered prefix, as before")

	// The old proposal does not make the script run.
	assert.Equal(t, Ask, Checker{Root: root, Rules: rules(t, "allow set")}.Decide(sevenLines).Verdict)

	want := Rule{Effect: Allow, Command: sevenLines, Script: true}
	assert.Equal(t, want, d.Propose)
	with := Checker{Root: root, Rules: []Rule{d.Propose}}
	assert.Equal(t, Run, with.Decide(sevenLines).Verdict, "the proposed rule lets the identical script run")
	assert.Equal(t, Run, with.Decide(sevenLines+"\n\n").Verdict, "trailing newlines change nothing")
	assert.Equal(t, Ask, with.Decide(sevenLines+"\nrm -rf ~").Verdict, "another script still asks")
	assert.Equal(t, Ask, with.Decide("go test ./...").Verdict, "a script rule is not a prefix rule")
}

func TestProposalIsAPrefixWhenThatIsEnough(t *testing.T) {
	root := t.TempDir()
	for line, want := range map[string]Rule{
		"go test ./... -run X":                  {Effect: Allow, Command: "go test"},
		"go test ./a\ngo test ./b":              {Effect: Allow, Command: "go test"},
		"echo one; echo two > out.txt":          {Effect: Allow, Command: "echo"},
		"go vet ./... && staticcheck .":         {Effect: Allow, Command: "go vet ./... && staticcheck .", Script: true},
		"go test ./... > /tmp/out.txt":          {Effect: Allow, Command: "go test ./... > /tmp/out.txt", Script: true},
		"x=1":                                   {Effect: Allow, Command: "x=1", Script: true},
		"git log --output=/tmp/x":               {Effect: Allow, Command: "git log --output=/tmp/x", Script: true},
		"PATH=/tmp/bin:$PATH make test":         {Effect: Allow, Command: "PATH=/tmp/bin:$PATH make test", Script: true},
		"env -S'touch M'":                       {Effect: Allow, Command: "env -S'touch M'", Script: true},
		"x='a[$(touch M)]'; (( x )) && go test": {Effect: Allow, Command: "x='a[$(touch M)]'; (( x )) && go test", Script: true},
	} {
		d := Checker{Root: root}.Decide(line)
		require.Equal(t, Ask, d.Verdict, line)
		assert.Equal(t, want, d.Propose, line)
		assert.Equal(t, Run, Checker{Root: root, Rules: []Rule{d.Propose}}.Decide(line).Verdict, line)
	}
}

// What runs is not in the text: no rule is proposed, and a script rule
// for such a line does not approve it.
func TestNoProposalForLinesThatBuildWhatTheyRun(t *testing.T) {
	root := t.TempDir()
	for _, line := range []string{
		`eval "$CMD"`, "source ./env.sh && go test", "$CMD test", `bash -c "$X"`, "sh -c 'go test'",
		"sudo go test", "xargs rm < files.txt", "sed -f script.sed a.txt", "go test && timeout 5 $CMD",
	} {
		d := Checker{Root: root}.Decide(line)
		require.Equal(t, Ask, d.Verdict, line)
		assert.Empty(t, d.Propose.Command, line)
		script := Rule{Effect: Allow, Command: line, Script: true}
		assert.Equal(t, Ask, Checker{Root: root, Rules: []Rule{script}}.Decide(line).Verdict, line)
	}
}

func TestDenyWinsOverScriptRules(t *testing.T) {
	root := t.TempDir()
	script := "go test ./...\ngit push origin main"
	c := Checker{Root: root, Rules: append(rules(t, "deny git push"), Rule{Effect: Allow, Command: script, Script: true})}
	d := c.Decide(script)
	require.Equal(t, Refuse, d.Verdict)
	assert.Equal(t, "deny git push", d.Rule.String())

	denied := Checker{Root: root, Rules: []Rule{{Effect: Deny, Command: "rm -rf build", Script: true}}}
	assert.Equal(t, Refuse, denied.Decide("rm -rf build\n").Verdict)
}

func TestScriptRuleTextRoundTrips(t *testing.T) {
	r := Rule{Effect: Allow, Command: "set -e\necho \"a b\" [x]\n\tgo test", Script: true}
	assert.Equal(t, `allow script "set -e\necho \"a b\" [x]\n\tgo test"`, r.String())
	back, err := ParseRule(r.String())
	require.NoError(t, err)
	assert.Equal(t, r, back)
	assert.Nil(t, r.Words())

	// A prefix rule for the script(1) command still reads as words.
	old, err := ParseRule("allow script -q")
	require.NoError(t, err)
	assert.Equal(t, Rule{Effect: Allow, Command: "script -q"}, old)

	_, err = ParseRule(`allow script "unterminated`)
	assert.Error(t, err)
	assert.Error(t, Rule{Effect: Allow, Command: " \n", Script: true}.Validate())
}

// A rules file written before script rules existed loads unchanged, and a
// script rule is saved and read back by the next session.
func TestStoreKeepsScriptRulesAndOldFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "permissions.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"rules":[{"effect":"allow","command":"go test"},{"effect":"deny","command":"git push --force","exact":true}]}`), 0o600))
	p, notice := OpenStore(path, nil)
	require.Empty(t, notice)
	assert.Equal(t, []Rule{
		{Effect: Allow, Command: "go test", Origin: OriginWorkspace},
		{Effect: Deny, Command: "git push --force", Exact: true, Origin: OriginWorkspace},
	}, p.All())

	script := Rule{Effect: Allow, Command: sevenLines, Script: true}
	require.NoError(t, p.Add(script, OriginWorkspace))
	require.NoError(t, p.Add(script, OriginWorkspace), "added once")
	var f permissionsFile
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &f))
	require.Len(t, f.Rules, 3)
	assert.True(t, f.Rules[2].Script)

	again, notice := OpenStore(path, nil)
	require.Empty(t, notice)
	assert.Equal(t, Run, again.Checker(t.TempDir()).Decide(sevenLines).Verdict)

	// /permissions keeps it by its line.
	removed, err := again.Keep([]Rule{{Effect: Allow, Command: "go test", Origin: OriginWorkspace}, {Effect: Allow, Command: sevenLines, Script: true, Origin: OriginWorkspace}})
	require.NoError(t, err)
	assert.Equal(t, 1, removed)
	assert.Len(t, again.All(), 2)
}
