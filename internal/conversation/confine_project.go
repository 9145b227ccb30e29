package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/procguard"
	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
)

// This file holds Options.ConfineProjectConfig: what the project and
// local settings files start runs confined, for hosts (agentloop serve)
// whose working directories someone else writes.

// ErrProjectHookRefused is wrapped by the failure of a project or local
// command hook that Options.ConfineProjectConfig keeps from running: the
// permission rules deny its command, or the kernel cannot sandbox it.
var ErrProjectHookRefused = errors.New("agentloop: project hook refused")

// repoSource reports whether a settings source is a file that lives in
// the working directory (and so can be written by whoever owns it).
func repoSource(src settings.Source) bool {
	return src == settings.ProjectSettings || src == settings.LocalSettings
}

// startHook is the hooks dispatcher's Start under ConfineProjectConfig:
// hooks of the user's and managed settings (and plugins) start as usual;
// a project or local hook's command is judged as a Bash command and runs
// in the session's sandbox, or not at all.
func (s *Session) startHook(cmd *exec.Cmd, origin settings.Source) error {
	if !repoSource(origin) {
		return procguard.Start(cmd)
	}
	command := cmd.Args[len(cmd.Args)-1]
	input, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrProjectHookRefused, err)
	}
	if d := s.checker.Decide(context.Background(), permission.Call{Tool: "Bash", Input: input}); d.Behavior == permission.Deny {
		return fmt.Errorf("%w: a %s settings hook's command is denied by the permission rules: %s",
			ErrProjectHookRefused, origin, d.Message)
	}
	if s.sb == nil || s.sb.unavail != nil || testDisableSandbox.Load() {
		why := "the sandbox is not set up"
		if s.sb != nil && s.sb.unavail != nil {
			why = s.sb.unavail.Error()
		}
		return fmt.Errorf("%w: a %s settings hook runs only sandboxed, and the sandbox cannot run here (%s)",
			ErrProjectHookRefused, origin, why)
	}
	p, err := s.sandboxPolicy(s.currentMode() == PermissionPlan)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrProjectHookRefused, err)
	}
	if err := sandbox.Start(cmd, p); err != nil {
		return fmt.Errorf("%w: starting a %s settings hook in the sandbox: %w", ErrProjectHookRefused, origin, err)
	}
	return nil
}
