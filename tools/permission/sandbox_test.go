package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Which reasons a workspace-write sandbox (no network, .git read-only,
// secrets hidden) makes harmless: the uncovered commands and the code the
// line names; never what the checks cannot see (opaque code), escalation,
// a possible deny match, writes outside or into .git, deletions or
// network access.
func TestSandboxHarmlessReasons(t *testing.T) {
	root := t.TempDir()
	c := Checker{Root: root, Rules: rules(t, "allow go test", "allow echo", "deny git push")}
	cases := []struct {
		line     string
		harmless bool
		readOnly bool // harmless in a read-only sandbox
	}{
		// No rule covers it: contained.
		{"go build ./...", true, true},
		{"make", true, true},
		{"sed -i s/a/b/ file.go", true, true},
		{"mkdir -p build && touch build/x", true, true},
		// The escape table's code-running options run inside the sandbox too.
		{"find . -name '*.go' -exec grep -l TODO {} +", true, true},
		{"git -c core.pager=less log", true, true},
		{"PATH=./bin:$PATH go test ./...", true, true},
		{"go test -exec ./wrap ./...", true, true},
		// Writes to a relative path after cd, or to a computed path: the
		// sandbox refuses them if they leave the workspace.
		{"cd sub && echo x > out.txt", true, true},
		{`echo x > "$OUT"`, true, true},
		// What runs is not in the text: the deny rules and the destructive
		// checks cannot see it.
		{"eval \"$CMD\"", false, false},
		{"sh -c 'git push'", false, false},
		{"xargs rm < list", false, false},
		{"$TOOL build", false, false},
		// Escalation.
		{"sudo make install", false, false},
		// A deny rule that may match after expansion.
		{"git $SUB", false, false},
		// Writes outside the workspace or into .git, named in the text.
		{"echo x > /etc/motd", false, true},
		{"echo x > .git/hooks/pre-commit", false, true},
		{"npm install -g typescript", false, true},
		// Deletions and network access (cautions).
		{"rm -rf build", false, true},
		{"git clean -fdx", false, true},
		{"find . -name '*.o' -delete", false, true},
		{"find . -name '*.o' -exec rm {} +", false, true},
		{"curl -o x https://example.com/x", false, true},
		{"git fetch origin", false, true},
		{"npm ci", false, true},
		{"go mod download", false, true},
		{"rsync -a build/ host:/srv/", false, true},
		// .git writes.
		{"git commit -m x", false, true},
		{"git checkout -b topic", false, true},
		// The parser cannot read it.
		{"echo $((", false, false},
	}
	for _, tc := range cases {
		d := c.Decide(tc.line)
		require.Equal(t, Ask, d.Verdict, tc.line)
		require.Len(t, d.Concerns, len(d.Reasons), tc.line)
		assert.Equal(t, tc.harmless, d.SandboxHarmless(), "%s: %v %v %v", tc.line, d.Reasons, d.Concerns, d.Cautions)
		assert.Equal(t, tc.readOnly, d.ReadOnlyHarmless(), "%s (read-only): %v %v", tc.line, d.Reasons, d.Concerns)
	}
	// Decided lines are not "harmless": the rules decide them.
	assert.False(t, c.Decide("go test ./...").SandboxHarmless())
	assert.False(t, c.Decide("git push").SandboxHarmless())
	assert.Equal(t, Refuse, c.Decide("git push").Verdict)
}

// Cautions name what a line will need, whatever the verdict: a rule that
// allows git push does not make it need the network less.
func TestCautions(t *testing.T) {
	c := Checker{Root: t.TempDir(), Rules: rules(t, "allow git push", "allow git log", "allow git status")}
	d := c.Decide("git push origin main")
	assert.Equal(t, Run, d.Verdict)
	assert.True(t, d.NeedsNetwork())
	assert.True(t, d.NeedsSSH(nil), "git remotes may be SSH")
	assert.False(t, d.NeedsSSH(func() bool { return false }), "not when every remote is https")
	assert.False(t, d.NeedsGitWrite())
	for _, line := range []string{"git log --oneline", "git status", "git branch", "git branch -a", "git tag -l", "git remote -v", "git stash list", "git config --get user.name"} {
		d := c.Decide(line)
		assert.False(t, d.NeedsNetwork(), line)
		assert.False(t, d.NeedsGitWrite(), line)
	}
	assert.True(t, c.Decide("git commit -am x").NeedsGitWrite())
	assert.True(t, c.Decide("git -C sub commit -m x").NeedsGitWrite())
	assert.True(t, c.Decide("git branch topic").NeedsGitWrite())
	assert.True(t, c.Decide("git pull").NeedsGitWrite())
	assert.True(t, c.Decide("ssh host uptime").NeedsSSH(func() bool { return false }), "ssh itself")
	assert.True(t, c.Decide("scp a.txt host:").NeedsSSH(nil))
	assert.False(t, c.Decide("curl https://x").NeedsSSH(nil))
	assert.False(t, c.Decide("go build ./...").NeedsNetwork())
	assert.False(t, c.Decide("cp a:b c").NeedsNetwork())
}

// A rule's widening: written after "with", read back the same, stored in
// the JSON file beside the old fields, which read back as before.
func TestWideningRuleSyntax(t *testing.T) {
	for _, line := range []string{
		"allow git push with network",
		"allow git commit with git-write",
		"allow git push with network, read ~/.ssh, socket /run/user/1000/ssh-agent.socket",
		"allow exact make install with write /usr/local/lib",
		`allow go build with write "/tmp/a dir, b"`,
		`allow script "set -e\ngit push" with network`,
	} {
		r, err := ParseRule(line)
		require.NoError(t, err, line)
		assert.Equal(t, line, r.String())
		assert.False(t, r.Widening.IsZero(), line)
	}
	r, err := ParseRule("allow git push with network, read ~/.ssh")
	require.NoError(t, err)
	assert.Equal(t, "git push", r.Command)
	assert.Equal(t, Widening{Network: true, Read: []string{"~/.ssh"}}, r.Widening)
	// "with" is a command word unless a widening follows.
	r, err = ParseRule("allow echo with love")
	require.NoError(t, err)
	assert.Equal(t, "echo with love", r.Command)
	assert.True(t, r.Widening.IsZero())
	// Only allow rules widen; paths are absolute.
	_, err = ParseRule("deny git push with network")
	assert.Error(t, err)
	// A widening that does not parse (a relative path) stays command words.
	r, err = ParseRule("allow go build with write cache")
	require.NoError(t, err)
	assert.Equal(t, "go build with write cache", r.Command)
	assert.True(t, r.Widening.IsZero())
	_, err = ParseWidening("write cache")
	assert.ErrorContains(t, err, "absolute")
}

// A rules file written before widenings existed reads back unchanged; a
// widening added to an existing allow rule merges into it, and the file
// keeps the old fields an older Fido reads.
func TestWideningStoreCompatibility(t *testing.T) {
	path := filepath.Join(t.TempDir(), "permissions.json")
	old := `{"version":1,"rules":[{"effect":"allow","command":"git push"},{"effect":"allow","command":"set -e\ngo test ./...","script":true},{"effect":"deny","command":"rm -rf /","exact":true}]}`
	require.NoError(t, os.WriteFile(path, []byte(old), 0o600))
	s, notice := OpenStore(path, nil)
	require.Empty(t, notice)
	var got []string
	for _, r := range s.All() {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{"allow git push", `allow script "set -e\ngo test ./..."`, "deny exact rm -rf /"}, got)
	require.NoError(t, s.Add(Rule{Effect: Allow, Command: "git push", Widening: Widening{Network: true}}, OriginWorkspace))
	require.NoError(t, s.Add(Rule{Effect: Allow, Command: "git push", Widening: Widening{Read: []string{"~/.ssh"}}}, OriginWorkspace))
	s2, _ := OpenStore(path, nil)
	all := s2.All()
	require.Len(t, all, 3)
	assert.Equal(t, "allow git push with network, read ~/.ssh", all[0].String())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"command": "git push"`)
	assert.Contains(t, string(b), `"network": true`)
	// Keep (the /permissions buffer) compares the widening too.
	removed, err := s2.Keep([]Rule{all[1], all[2]})
	require.NoError(t, err)
	assert.Equal(t, 1, removed)
}

// The widening a line gets from its rules: every command must be covered
// by a rule with it (inert builtins aside); a script rule widens its line.
func TestDecisionWiden(t *testing.T) {
	c := Checker{Root: t.TempDir(), Rules: rules(t,
		"allow git push with network, read ~/.ssh", "allow git fetch with network", "allow git status",
		"allow cd", "allow echo", "allow make", `allow script "make && git push" with git-write`)}
	d := c.Decide("git push origin main")
	assert.Equal(t, Run, d.Verdict)
	assert.Equal(t, Widening{Network: true, Read: []string{"~/.ssh"}}, d.Widen)
	assert.Equal(t, Widening{Network: true}, c.Decide("git fetch && git push").Widen, "the intersection")
	assert.Equal(t, Widening{Network: true, Read: []string{"~/.ssh"}}, c.Decide("cd sub && git push && echo done").Widen, "cd and echo need nothing")
	assert.True(t, c.Decide("git status && git push").Widen.IsZero(), "git status has no widening")
	assert.True(t, c.Decide("make; git push").Widen.IsZero(), "make would get the network too")
	assert.Equal(t, Widening{GitWrite: true}, c.Decide("make && git push").Widen.Intersect(Widening{GitWrite: true}))
	assert.True(t, c.Decide("sh -c 'git push'").Widen.IsZero(), "what runs is not in the text")

	// The rule an "Always" on a widening question adds.
	assert.Equal(t, "allow git push with network, read ~/.ssh, socket /run/a", c.WideningRule("git push -u origin x", Widening{Network: true, Read: []string{"~/.ssh"}, Sockets: []string{"/run/a"}}).String())
	assert.Equal(t, "allow npm ci with network", c.WideningRule("npm ci", Widening{Network: true}).String())
	assert.Equal(t, `allow script "make; npm ci" with network`, c.WideningRule("make; npm ci", Widening{Network: true}).String())
	assert.Equal(t, "", c.WideningRule("eval x", Widening{Network: true}).Command)
}
