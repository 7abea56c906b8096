package tools

import (
	"io/fs"

	"github.com/fido-nvim/fido/tools/confined"
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
