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
