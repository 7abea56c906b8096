package nvim

import (
	"context"
	"path/filepath"

	"github.com/neovim/go-client/nvim"

	"github.com/fido-nvim/fido/tools"
)

// Editor implements tools.Editor over the RPC connection.
type Editor struct {
	v *nvim.Nvim
	// lsp and chanID route the answers of fido.lsp (see lsp.go).
	lsp    *lspCalls
	chanID int
}

// Modified reports whether a loaded buffer for path has unsaved changes.
func (e *Editor) Modified(ctx context.Context, path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	var modified bool
	err = e.call(ctx, func() error {
		return e.v.ExecLua(`return require("fido.bridge").modified(...)`, &modified, abs)
	})
	return modified, err
}

// Reload schedules :checktime for the loaded buffers of these paths, so
// they show what is on disk (Neovim asks first when a buffer has changes).
func (e *Editor) Reload(ctx context.Context, paths []string) {
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		if a, err := filepath.Abs(p); err == nil {
			abs = append(abs, a)
		}
	}
	if len(abs) == 0 {
		return
	}
	_ = e.call(ctx, func() error {
		return e.v.ExecLua(`require("fido.bridge").reload(...)`, nil, abs)
	})
}

// RefreshAll re-checks every loaded file buffer against the disk (after a
// shell command): unmodified buffers that changed are reloaded, modified ones
// get Neovim's usual question.
func (e *Editor) RefreshAll(ctx context.Context) {
	_ = e.call(ctx, func() error {
		return e.v.ExecLua(`require("fido.bridge").refresh_all()`, nil)
	})
}

// call runs an RPC and gives up when ctx ends (Neovim may be blocked in a
// prompt; the call then completes in the background).
func (e *Editor) call(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

var (
	_ tools.Editor    = (*Editor)(nil)
	_ tools.Refresher = (*Editor)(nil)
)
