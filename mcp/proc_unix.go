//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own, so that
// killGroup stops whatever it started too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the command's process group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
