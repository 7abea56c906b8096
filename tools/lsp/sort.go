package lsp

import "sort"

// sortDiagnostics orders by severity (errors first), then path, line, column.
func sortDiagnostics(ds []diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		ra, okA := severityRank[a.Severity]
		rb, okB := severityRank[b.Severity]
		if !okA {
			ra = 4
		}
		if !okB {
			rb = 4
		}
		switch {
		case ra != rb:
			return ra < rb
		case a.Path != b.Path:
			return a.Path < b.Path
		case a.Line != b.Line:
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}
