//go:build unix

package tools

import (
	"os"
	"os/exec"
	"syscall"
)

// bashIsolate puts the command in a process group of its own, so that
// everything it starts can be signalled together, and where the platform
// allows has the kernel kill the shell when agentloop dies without
// cleaning up (bashDeathSignal).
func bashIsolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	bashDeathSignal(cmd.SysProcAttr)
}

// bashSignalGroup signals the process group led by pid. Errors are ignored:
// a group that is already gone needs no signal.
func bashSignalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// bashExitCode is the exit status as a shell reports it: 128+N for a
// process ended by signal N.
func bashExitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// bashOwnedByMe reports whether this process's user owns the file.
func bashOwnedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}
