//go:build !unix

package agentlooptest

import "time"

// processCPU returns 0: the process's CPU time is measured on unix only.
func processCPU() time.Duration { return 0 }
