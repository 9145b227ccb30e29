package tools

import "syscall"

// bashDeathSignal asks the kernel to SIGKILL the shell when the thread
// that started it exits, which for an unsandboxed start (from an ordinary
// runtime thread, which lives as long as the process) means when
// agentloop itself dies, even by SIGKILL, so a killed agent leaves no
// shell running. The sandbox clears it: it starts commands from a thread
// it discards at once (internal/sandbox). Processes the shell started in
// the background outlive it; only a cleanup that runs (Close, cancel)
// signals the whole group.
func bashDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
