//go:build !unix

package nvim

import "os"

// RPCStdin is standard input for the RPC stream.
func RPCStdin() *os.File { return os.Stdin }
