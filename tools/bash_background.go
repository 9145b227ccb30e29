package tools

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/internal/engine"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/tool"
)

// bashStartBackground starts in.Command as a background shell of the
// session for the call toolUseID, confined by policy when it is not nil,
// and tells the model where its output goes and that it will hear when the
// command ends (see [Shells.TakeNotices]).
func bashStartBackground(ctx context.Context, env *tool.Env, shell, dir, toolUseID string, in bashInput, policy *sandbox.Policy) (tool.Result, error) {
	lifetime := bashClamp(in.Timeout, bashDefaultLifetime, bashMaxLifetime)
	var emit TaskEmitter
	if f := engine.Emitter(ctx); f != nil {
		emit = f
	}
	info, err := BackgroundShells(env).start(bashEnviron(env), shell, dir, in.Command, lifetime, policy, toolUseID, in.Description, emit)
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot start the command in the background: %v", err)), nil
	}
	text := fmt.Sprintf("Command running in background with ID: %s. Its stdout is being written to %s and its stderr to %s. "+
		"You will be notified when it completes. To check interim output, read those files; call TaskStop with task_id %q to stop it.",
		info.ID, info.StdoutPath, info.StderrPath, info.ID)
	r := tool.Text(text)
	r.Structured = BashResult{BackgroundTaskID: info.ID}
	return r, nil
}
