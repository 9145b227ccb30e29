// Command sandboxinfo prints whether this machine can sandbox Bash
// commands (the Landlock ABI version), so that CI logs say whether the
// sandbox tests ran or skipped. It always exits 0.
package main

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/sandbox"
)

func main() {
	abi, err := sandbox.Available()
	if err != nil {
		fmt.Printf("sandbox: unavailable (%v): sandbox tests will skip\n", err)
		return
	}
	fmt.Printf("sandbox: Landlock ABI %d: sandbox tests will run\n", abi)
}
