package sandbox

import (
	"os/exec"
	"strings"
)

// unsetEnv removes the variables of p.UnsetEnv from cmd's environment
// (the process's environment when cmd.Env is nil), whatever their value
// and however often they occur. Variables that the policy itself sets
// ([Policy.Env]) are appended afterwards and so are never removed.
func (p *Policy) unsetEnv(cmd *exec.Cmd) {
	if len(p.UnsetEnv) == 0 {
		return
	}
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	drop := make(map[string]bool, len(p.UnsetEnv))
	for _, n := range p.UnsetEnv {
		drop[n] = true
	}
	kept := cmd.Env[:0:0]
	for _, kv := range cmd.Env {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			kept = append(kept, kv)
		}
	}
	cmd.Env = kept
}
