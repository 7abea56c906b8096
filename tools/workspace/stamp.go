package workspace

import (
	"os"
	"time"
)

// FileStamp is what a file looked like at one moment (existence, size,
// modification time): comparing two tells cheaply whether it changed.
type FileStamp struct {
	Path    string
	ModTime time.Time
	Size    int64
	Exists  bool
}

// StampOf stamps the file at path (a final symlink is not followed).
func StampOf(path string) FileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return FileStamp{Path: path}
	}
	return FileStamp{Path: path, ModTime: fi.ModTime(), Size: fi.Size(), Exists: true}
}
