//go:build !unix

package mcp

import "os/exec"

func ownGroup(cmd *exec.Cmd, _ string) *exec.Cmd { return cmd }

func endGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
