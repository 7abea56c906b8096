//go:build !unix

package mcp

import "os/exec"

func ownGroup(*exec.Cmd) {}

func endGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
