package tools

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/tool"
)

// bashStartBackground starts in.Command as a background shell of the
// session, confined by policy when it is not nil, and tells the model where
// its output goes.
func bashStartBackground(env *tool.Env, shell, dir string, in bashInput, policy *sandbox.Policy) (tool.Result, error) {
	lifetime := bashClamp(in.Timeout, bashDefaultLifetime, bashMaxLifetime)
	info, err := BackgroundShells(env).start(bashEnviron(env), shell, dir, in.Command, lifetime, policy)
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot start the command in the background: %v", err)), nil
	}
	text := fmt.Sprintf("Command running in background with ID: %s. Its stdout is being written to %s and its stderr to %s; "+
		"read those files to follow its progress, and call TaskStop with task_id %q to stop it.",
		info.ID, info.StdoutPath, info.StderrPath, info.ID)
	r := tool.Text(text)
	r.Structured = BashResult{BackgroundTaskID: info.ID}
	return r, nil
}
