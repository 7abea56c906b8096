package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/fido-nvim/fido/tools"
)

// HashFile returns the content hash of the regular file at abs, read
// through the workspace's os.Root; exists is false when there is no regular
// file there (a directory or device is for the tool itself to refuse).
func (ws *Workspace) HashFile(abs string) (hash string, exists bool, err error) {
	f, fi, err := ws.Sandbox.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return "", false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", true, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// errStale is the refusal for a file that changed since the model saw it.
func errStale(rel string) error {
	return fmt.Errorf("%s changed on disk since you last read it (the user, a command or another program edited it); "+
		"this was not applied, to keep that edit. Read %s again with read_file and redo the change on its current content", rel, rel)
}

// errUnread is the refusal for overwriting a file the model never read.
func errUnread(rel string) error {
	return fmt.Errorf("%s exists and you have not read it in this conversation; read it before overwriting it "+
		"(read_file), or change it with search/replace; this was not applied", rel)
}

// CheckSeen is the read-before-write guard for one file about to be changed:
// an existing file must still hold what the conversation last saw of it; an
// existing file the conversation never saw may only be changed when
// unreadOK (search/replace: the search text is the evidence). A missing file
// passes (nothing to lose). Without a tracker it passes.
func (ws *Workspace) CheckSeen(ctx context.Context, ft *tools.FileTracker, abs string, unreadOK bool) error {
	if ft == nil {
		return nil
	}
	rel := ws.Sandbox.Rel(abs)
	hash, exists, err := ws.HashFile(abs)
	if err != nil {
		return errors.New(ErrorText(ws, abs, err))
	}
	if !exists {
		return nil
	}
	seen, ok := ft.Seen(rel)
	switch {
	case !ok && unreadOK:
		return nil
	case !ok:
		return errUnread(rel)
	case seen != hash:
		return errStale(rel)
	}
	return ctx.Err()
}
