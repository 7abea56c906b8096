package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// maxDiffText bounds the files whose lines are matched before and after an
// edit; larger files are compared by message alone.
const maxDiffText = 4 << 20

// PatchDiagnostics is the interceptor for patch: the diagnostics of the
// files it writes, before and after.
func PatchDiagnostics(ws *workspace.Workspace) tools.Interceptor {
	return afterEdit{ws: ws, paths: func(args json.RawMessage) []string {
		var p struct {
			Operations []struct {
				Path string `json:"path"`
			} `json:"operations"`
		}
		_ = json.Unmarshal(args, &p)
		out := []string{}
		seen := map[string]bool{}
		for _, op := range p.Operations {
			abs, err := ws.Sandbox.Resolve(op.Path)
			if err != nil || abs == ws.Root || seen[abs] || loadError(ws, op.Path, abs) != nil {
				continue
			}
			seen[abs] = true
			out = append(out, abs)
		}
		return out
	}}.around
}

// BashDiagnostics is the interceptor for bash_exec: the diagnostics of the
// loaded buffers that a language server serves and the command changed.
func BashDiagnostics(ws *workspace.Workspace) tools.Interceptor {
	return afterEdit{ws: ws, paths: func(json.RawMessage) []string { return nil }}.around
}

// afterEdit appends to a tool's result the diagnostics its change introduced.
type afterEdit struct {
	ws *workspace.Workspace
	// paths lists the files a call may change; nil: every loaded buffer.
	paths func(args json.RawMessage) []string
}

func (a afterEdit) around(ctx context.Context, _ tools.Invocation, args json.RawMessage, run func(context.Context) (tools.Result, error)) (tools.Result, error) {
	ls, ok := a.ws.Editor.(tools.LanguageServers)
	if !ok {
		return run(ctx)
	}
	paths := a.paths(args)
	if paths != nil && len(paths) == 0 {
		return run(ctx)
	}
	w, err := ls.WatchDiagnostics(ctx, paths)
	if err != nil || w.Disabled {
		return run(ctx)
	}
	before := map[string]tools.FileDiagnostics{}
	texts := map[string][2][]byte{}
	for _, f := range w.Files {
		before[f.Path] = f
		texts[f.Path] = [2][]byte{readSmall(f.Path), nil}
	}
	res, err := run(ctx)
	if err != nil {
		_, _ = ls.SettleDiagnostics(context.WithoutCancel(ctx), w, []string{})
		return res, err
	}
	changed := res.Changed
	if paths != nil && changed == nil {
		changed = []string{}
	}
	if paths == nil && len(w.Files) == 0 {
		changed = []string{} // nothing was served before: nothing to compare
	}
	after, err := ls.SettleDiagnostics(ctx, w, changed)
	if err != nil {
		return res, nil
	}
	if changed != nil {
		after = onlyChanged(after, changed)
	}
	for _, f := range after {
		t := texts[f.Path]
		t[1] = readSmall(f.Path)
		texts[f.Path] = t
	}
	report := editReport{display: func(p string) string { return display(a.ws.Root, p) }, before: before, texts: texts}.render(after)
	if report != "" {
		if res.Content != "" && !strings.HasSuffix(res.Content, "\n") {
			res.Content += "\n"
		}
		res.Content += report
	}
	return res, nil
}

// onlyChanged keeps the files in changed.
func onlyChanged(files []tools.FileDiagnostics, changed []string) []tools.FileDiagnostics {
	set := map[string]bool{}
	for _, p := range changed {
		set[p] = true
	}
	var out []tools.FileDiagnostics
	for _, f := range files {
		if set[f.Path] {
			out = append(out, f)
		}
	}
	return out
}

// readSmall reads a regular file of at most maxDiffText bytes, without
// blocking on a FIFO or reading a device; nil otherwise.
func readSmall(path string) []byte {
	b, err := confined.ReadPath(path, maxDiffText)
	if err != nil {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// display shows p relative to the workspace root when it is inside (symlinks
// resolved), else as it is.
func display(root, p string) string {
	if rel, ok := inside(root, p); ok {
		return rel
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		if rel, ok := inside(root, r); ok {
			return rel
		}
	}
	return p
}

func inside(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
