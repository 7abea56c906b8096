//go:build !linux

package shell

func protectedChild() int { return 0 }
