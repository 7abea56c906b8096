//go:build !unix

package workspace

import "os"

// Without flock the lock only orders this process's users of the file (the
// stores' own mutexes already do); another process is not excluded.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}
