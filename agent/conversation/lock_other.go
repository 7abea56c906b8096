//go:build !unix

package conversation

import "os"

// lockFile is a no-op where flock does not exist; one host per workspace is
// then the user's to keep.
func lockFile(*os.File) error { return nil }
