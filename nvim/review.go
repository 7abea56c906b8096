package nvim

import "time"

// showEditTimeout bounds how long a preview waits for a busy Neovim: the
// picker that follows still asks, so a late preview loses nothing.
const showEditTimeout = 2 * time.Second

// ShowEdit implements agent.UI: the proposed change as a unified diff in a
// float (filetype diff) while the review picker asks; an empty diff closes
// it. It waits (bounded) until Neovim has scheduled it, so the preview is up
// before the picker opens; the RPC loop never waits.
func (u *UI) ShowEdit(title, diff string) {
	if u.prompts == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if diff == "" {
			_ = u.prompts.exec(`require("fido.review").close_preview()`)
			return
		}
		_ = u.prompts.exec(`require("fido.review").preview(...)`, title, diff)
	}()
	select {
	case <-done:
	case <-time.After(showEditTimeout):
	}
}
