package workspace

import (
	"io/fs"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/secret"
)

// WriteFileAtomic writes data to a temporary file beside path (named
// .<name>.<random>.tmp), syncs it, renames it over path and syncs the
// directory, so readers see the old or the new file, never a mix, even after
// a crash. Fido's state files (plan, undo log, snapshots) are written this
// way; the file is confined to its directory (a symlink in its place is
// replaced, never followed). Workspace files go through
// Sandbox.WriteFileAtomic, which is confined to the workspace.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return confined.WritePath(path, data, perm)
}

// WriteStateFile is WriteFileAtomic for Fido's own state (snapshots,
// conversations): the registered secrets are redacted from data first.
// Workspace files are never redacted: that would change the user's files.
func WriteStateFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFileAtomic(path, secret.RedactBytes(data), perm)
}
