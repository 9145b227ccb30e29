package conversation

import (
	"encoding/json"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/permission"
)

// concurrentCall is the session's engine.Config.Concurrent: a Bash call
// in the foreground whose command only reads (permission.BashReadOnly)
// runs concurrently with the reply's other read-only calls, as the
// reference runs such calls.
func (s *Session) concurrentCall(call *engine.ToolCall) bool {
	if call.Name != "Bash" {
		return false
	}
	var in struct {
		Command         string `json:"command"`
		RunInBackground bool   `json:"run_in_background"`
	}
	if json.Unmarshal(call.Input, &in) != nil || in.RunInBackground {
		return false
	}
	cwd := ""
	if s.env != nil {
		cwd = s.env.Cwd
	}
	return permission.BashReadOnly(in.Command, cwd)
}
