//go:build unix && !linux

package tools

import "syscall"

// bashDeathSignal does nothing where the kernel has no parent-death
// signal.
func bashDeathSignal(*syscall.SysProcAttr) {}
