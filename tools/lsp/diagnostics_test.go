package lsp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fido-nvim/fido/tools"
)

func TestLineMap(t *testing.T) {
	old := "a\nb\nc\nd\ne\n"
	// Two lines inserted after a, c replaced by C1 and C2, e kept.
	m := newLineMap([]byte(old), []byte("a\nx\ny\nb\nC1\nC2\nd\ne\n"))
	assert.True(t, m.same(1, 1), "a stays")
	assert.True(t, m.same(2, 4), "b moved down by the insertion")
	assert.True(t, m.same(3, 5), "c is in the block C1/C2 replaced")
	assert.True(t, m.same(3, 6))
	assert.False(t, m.same(3, 2), "the insertion after a is another block")
	assert.True(t, m.same(4, 7))
	assert.True(t, m.same(5, 8))
	assert.False(t, m.same(2, 2))

	// CRLF and a missing final newline compare equal line by line.
	m = newLineMap([]byte("a\r\nb\r\n"), []byte("z\na\nb"))
	assert.True(t, m.same(1, 2))
	assert.True(t, m.same(2, 3))

	// Past the end: shifted by the length change.
	assert.True(t, newLineMap([]byte("a\n"), []byte("z\na\n")).same(2, 3))
}

func TestIntroduced(t *testing.T) {
	d := func(line int, sev, msg string) diagnostic {
		return diagnostic{Line: line, Col: 2, Severity: sev, Message: msg, Source: "compiler"}
	}
	oldText := "package p\n\nfunc f() int {\n\treturn missing\n}\n"
	newText := "package p\n\n// doc\n// more\nfunc f() int {\n\treturn missing\n}\n\nfunc g() { foo() }\n"
	m := newLineMap([]byte(oldText), []byte(newText))
	before := []diagnostic{d(4, "error", "undefined: missing"), d(1, "hint", "a hint")}
	after := []diagnostic{
		d(6, "error", "undefined: missing"), // moved by the two inserted lines: old
		d(9, "error", "undefined: foo"),     // new
		d(9, "hint", "another hint"),        // hints are not reported
		d(9, "warning", "undefined: missing"),
	}
	got := introduced(before, after, m)
	assert.Equal(t, []diagnostic{d(9, "error", "undefined: foo"), d(9, "warning", "undefined: missing")}, got)

	// The same message at another, unrelated place is new.
	got = introduced(before, []diagnostic{d(6, "error", "undefined: missing"), d(9, "error", "undefined: missing")}, m)
	assert.Equal(t, []diagnostic{d(9, "error", "undefined: missing")}, got)

	// Without texts, message, severity and source alone match (as a multiset).
	got = introduced(before, []diagnostic{d(40, "error", "undefined: missing"), d(41, "error", "undefined: missing")}, nil)
	assert.Equal(t, []diagnostic{d(41, "error", "undefined: missing")}, got)
}

func TestEditReport(t *testing.T) {
	// As Neovim holds them: 0-based line, byte column 1 (character column 2).
	diag := func(line int, msg string) tools.Diagnostic {
		return tools.Diagnostic{Line: line - 1, Col: 1, Severity: 1, Message: msg, Source: "compiler"}
	}
	r := editReport{
		display: func(p string) string { return strings.TrimPrefix(p, "/w/") },
		before: map[string]tools.FileDiagnostics{
			"/w/a.go":     {Path: "/w/a.go", Fresh: true},
			"/w/b.go":     {Path: "/w/b.go", Fresh: true, Diagnostics: []tools.Diagnostic{diag(3, "undefined: x")}},
			"/w/slow.go":  {Path: "/w/slow.go", Fresh: false},
			"/w/clean.go": {Path: "/w/clean.go", Fresh: true},
		},
		texts: map[string][2][]byte{"/w/b.go": {[]byte("1\n2\n3\n"), []byte("0\n1\n2\n3\n")}},
	}
	var many []tools.Diagnostic
	for i := 1; i <= 25; i++ {
		many = append(many, diag(i, "undefined: y"))
	}
	out := r.render([]tools.FileDiagnostics{
		{Path: "/w/a.go", Servers: []string{"gopls"}, Fresh: true, Diagnostics: []tools.Diagnostic{diag(5, "undefined:\n  foo")}},
		{Path: "/w/b.go", Servers: []string{"gopls"}, Fresh: true, Diagnostics: []tools.Diagnostic{diag(4, "undefined: x")}},
		{Path: "/w/clean.go", Servers: []string{"gopls"}, Fresh: true},
		{Path: "/w/late.go", Servers: []string{"gopls"}, Fresh: false},
		{Path: "/w/new.go", Servers: []string{"gopls"}, Fresh: true, Diagnostics: many},
		{Path: "/w/slow.go", Servers: []string{"gopls"}, Fresh: true, Diagnostics: []tools.Diagnostic{diag(1, "old or new")}},
		{Path: "/w/unserved.txt"},
	})
	want := []string{
		"LSP (gopls): this edit introduced 1 in a.go:",
		"a.go:5:2: error: undefined: foo (compiler)",
		"LSP (gopls): no new errors or warnings in b.go (it still has 1 from before).",
		"LSP (gopls): clean.go is clean: no errors or warnings.",
		"LSP (gopls): late.go: no diagnostics arrived in time after the edit; check later with lsp_diagnostics.",
		"LSP (gopls): this edit introduced 25 in new.go:",
	}
	for i := 1; i <= 19; i++ {
		want = append(want, "new.go:"+strconv.Itoa(i)+":2: error: undefined: y (compiler)")
	}
	want = append(want,
		"LSP (gopls): this edit introduced 1 in slow.go (the server had not reported on this file before the edit, so some may be older):",
		"… and 7 more (lsp_diagnostics lists them).",
	)
	assert.Equal(t, strings.Join(want, "\n")+"\n", out)
	assert.Empty(t, r.render([]tools.FileDiagnostics{{Path: "/w/x.txt"}}), "no server: nothing added")
}
