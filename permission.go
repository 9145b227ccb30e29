package agentloop

import (
	"context"

	"github.com/agentloop/agentloop/internal/engine"
)

// authorize decides on a tool call with the session's permission policy.
func (s *session) authorize(_ context.Context, call *engine.ToolCall) engine.Decision {
	p := minPolicy{
		Mode:  string(s.mode),
		Allow: s.opts.AllowedTools,
		Dirs:  append([]string{s.env.Cwd}, s.env.AdditionalDirs...),
	}
	if s.mode == PermissionPlan {
		p.Mode = "plan"
	}
	d := p.Check(call.Name, call.Input, call.Tool.Info().ReadOnly)
	return engine.Decision{Allow: d.Allow, Message: d.Message, Source: "config", ReasonType: d.ReasonType}
}
