//go:build !linux

package tools

func protectedChild() int { return 0 }
