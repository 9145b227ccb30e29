//go:build unix

package agentlooptest

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (user and system),
// which other processes on a busy machine inflate less than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
