//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// Without process groups, only the shell itself can be stopped.

func bashIsolate(cmd *exec.Cmd) {}

func bashSignalGroup(pid int, kill bool) {
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		_ = p.Kill()
	}
}

func bashExitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	return ps.ExitCode()
}

func bashOwnedByMe(fi os.FileInfo) bool { return true }
