//go:build !unix

package confined

import (
	"os"
	"path/filepath"
)

const (
	openReadFlags = os.O_RDONLY
	openDirFlags  = os.O_RDONLY
)

// OpenChild opens the entry name of the open directory dir for reading,
// confined to dir.
func OpenChild(dir *os.File, name string) (*os.File, os.FileInfo, error) {
	root, err := os.OpenRoot(dir.Name())
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if filepath.Base(name) != name {
		return nil, nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	return Open(root, name)
}

// listable returns dir as it is.
func listable(dir *os.File, _ string) (*os.File, error) { return dir, nil }

// ReadlinkChild reads the target of the symlink name in the open directory dir.
func ReadlinkChild(dir *os.File, name string) (string, error) {
	root, err := os.OpenRoot(dir.Name())
	if err != nil {
		return "", err
	}
	defer root.Close()
	return root.Readlink(name)
}

// FirstHole reports no hole where the platform cannot tell.
func FirstHole(*os.File, int64) (int64, bool) { return 0, false }
