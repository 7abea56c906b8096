// Package confined opens, reads and writes files that must stay inside one
// directory tree, even when that tree is hostile: a cloned repository whose
// .gitignore is a symlink to /dev/zero or a FIFO, a state directory someone
// else can write to, a path component swapped for a symlink between a check
// and its use.
//
// Every name is resolved through an os.Root, so a symlink can never lead
// outside the tree (the kernel resolves one component at a time relative to an
// open directory; there is no window between check and use). Files are opened
// with O_NONBLOCK and checked with Fstat before a byte is read, so a FIFO or a
// device never blocks or feeds endless data; reads are size-capped and honour
// cancellation.
package confined
