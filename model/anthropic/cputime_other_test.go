//go:build !unix

package anthropic

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
