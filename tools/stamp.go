package tools

import (
	"os"
	"time"
)

// FileStamp is what a file looked like at one moment (existence, size,
// modification time): comparing two tells cheaply whether it changed.
type FileStamp struct {
	path  string
	mtime time.Time
	size  int64
	exist bool
}

// StampOf stamps the file at path (a final symlink is not followed).
func StampOf(path string) FileStamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return FileStamp{path: path}
	}
	return FileStamp{path: path, mtime: fi.ModTime(), size: fi.Size(), exist: true}
}
