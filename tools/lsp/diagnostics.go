package lsp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

// maxReported bounds the diagnostics one edit's result lists.
const maxReported = 20

// maxMessage bounds one diagnostic's message (runes).
const maxMessage = 300

// serious reports whether d is an error or a warning (what an edit report
// lists; information and hints are left to lsp_diagnostics).
func serious(d diagnostic) bool {
	return d.Severity == "error" || d.Severity == "warning"
}

// introduced returns the errors and warnings in after that were not in
// before: a diagnostic counts as old when one with the same message,
// severity and source was at the same place before the edit (its line
// shifted by the edit, or inside the block the edit replaced). m may be
// nil (texts unknown): then message, severity and source alone match.
func introduced(before, after []diagnostic, m *lineMap) []diagnostic {
	used := make([]bool, len(before))
	var out []diagnostic
	for _, a := range after {
		if !serious(a) {
			continue
		}
		found := false
		for i, b := range before {
			if used[i] || b.Message != a.Message || b.Severity != a.Severity || b.Source != a.Source {
				continue
			}
			if m != nil && !m.same(b.Line, a.Line) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}

// formatDiagnostic is one line: path:line:col: severity: message (source).
func formatDiagnostic(path string, d diagnostic) string {
	msg := text.Shorten(text.Collapse(d.Message), maxMessage)
	s := fmt.Sprintf("%s:%d:%d: %s: %s", path, d.Line, d.Col, d.Severity, msg)
	if d.Source != "" {
		s += " (" + d.Source + ")"
	}
	return s
}

// editReport is what one edit did to the diagnostics of the files it changed.
type editReport struct {
	// display turns an absolute path into what the model sees.
	display func(string) string
	before  map[string]tools.FileDiagnostics // by path; missing: the file was new or unserved
	// texts: by path, the content before and after (nil when unknown), which
	// also gives the diagnostics their character columns.
	texts map[string][2][]byte
}

// render appends the report for the files after the edit; "" when no
// language server serves any of them.
func (r editReport) render(after []tools.FileDiagnostics) string {
	sort.Slice(after, func(i, j int) bool { return after[i].Path < after[j].Path })
	var b strings.Builder
	listed, hidden := 0, 0
	for _, a := range after {
		if len(a.Servers) == 0 {
			continue
		}
		path := r.display(a.Path)
		servers := strings.Join(a.Servers, ", ")
		if !a.Fresh {
			fmt.Fprintf(&b, "LSP (%s): %s: no diagnostics arrived in time after the edit; check later with lsp_diagnostics.\n", servers, path)
			continue
		}
		prior, had := r.before[a.Path]
		t := r.texts[a.Path]
		now := diagnosticsOf(a.Path, a.Diagnostics, textLines(t[1]))
		var intro []diagnostic
		caveat := ""
		switch {
		case !had:
			intro = introduced(nil, now, nil)
		case !prior.Fresh:
			intro = introduced(nil, now, nil)
			caveat = " (the server had not reported on this file before the edit, so some may be older)"
		default:
			var m *lineMap
			if t[0] != nil && t[1] != nil {
				m = newLineMap(t[0], t[1])
			}
			intro = introduced(diagnosticsOf(a.Path, prior.Diagnostics, textLines(t[0])), now, m)
		}
		if len(intro) == 0 {
			still := len(introduced(nil, now, nil))
			if still > 0 {
				fmt.Fprintf(&b, "LSP (%s): no new errors or warnings in %s (it still has %d from before).\n", servers, path, still)
			} else {
				fmt.Fprintf(&b, "LSP (%s): %s is clean: no errors or warnings.\n", servers, path)
			}
			continue
		}
		fmt.Fprintf(&b, "LSP (%s): this edit introduced %d in %s%s:\n", servers, len(intro), path, caveat)
		for _, d := range intro {
			if listed == maxReported {
				hidden++
				continue
			}
			listed++
			b.WriteString(formatDiagnostic(path, d) + "\n")
		}
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "… and %d more (lsp_diagnostics lists them).\n", hidden)
	}
	return b.String()
}
