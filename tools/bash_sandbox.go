package tools

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/agentloop/agentloop/internal/procguard"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/tool"
)

// bashSandbox asks the session's sandbox Decider (see
// sandbox.SetDecider) how to confine the call's command: nil runs it
// unsandboxed. Without a session, or a session without a Decider,
// commands run unsandboxed.
func bashSandbox(ctx context.Context, env *tool.Env, in bashInput) (*sandbox.Policy, error) {
	if env == nil {
		return nil, nil
	}
	decide := sandbox.DeciderOf(env.State)
	if decide == nil {
		return nil, nil
	}
	p, err := decide(ctx, sandbox.Request{Command: in.Command, Unsandboxed: in.DangerouslyDisableSandbox})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return p, nil
}

// bashStart starts cmd, confined by policy when it is not nil.
func bashStart(cmd *exec.Cmd, policy *sandbox.Policy) error {
	if policy == nil {
		return procguard.Start(cmd)
	}
	return sandbox.Start(cmd, policy)
}
