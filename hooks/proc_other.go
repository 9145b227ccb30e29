//go:build !unix

package hooks

import (
	"os"
	"os/exec"
)

// isolate leaves cmd as it is: without process groups only the shell
// itself is killed when a hook times out.
func isolate(cmd *exec.Cmd) {}

// exitCode is the process's exit status.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	return ps.ExitCode()
}
