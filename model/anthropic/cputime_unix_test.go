//go:build unix

package anthropic

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, user and system:
// unlike a benchmark's wall time, it does not grow when other processes
// load the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
