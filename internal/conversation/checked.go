package conversation

import (
	"bytes"
	"encoding/json"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/permission"
)

// The file tools work on the path the permission check resolved, not on
// one resolved again when they run: a symbolic link swapped in between
// (by a background command, say) then makes the call fail instead of
// reaching another file. The session keeps that path per tool_use id from
// the decision to the run (tool.Env.CheckedPath).

// noteChecked records the checked path of an allowed call. decided is the
// input the checker judged (d, when it ran); final, when set, is the input
// the call runs with. When the input changed after the check (a hook's or
// the user's updatedInput), or no check resolved a path (a hook decided),
// the path is resolved now, at the approval.
func (s *Session) noteChecked(call *engine.ToolCall, decided json.RawMessage, d permission.Decision, final []byte) {
	if s.checker == nil {
		return
	}
	path := d.Path
	in := []byte(decided)
	if final != nil && !bytes.Equal(final, decided) {
		in, path = final, ""
	}
	if path == "" {
		p, ok := s.checker.FilePath(call.Name, in)
		if !ok {
			return
		}
		path = p
	}
	s.run().checked.Store(call.ID, path)
}

// checkedPath hands a tool the path recorded for its call, once.
func (s *Session) checkedPath(id string) (string, bool) {
	v, ok := s.run().checked.LoadAndDelete(id)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// readDenied is the read filter the search tools and Read apply while
// they run (tool.Env.ReadDenied): the session's deny rules on reading.
// It is part of authorisation, so the test seam that forces authorisation
// to allow switches it off too.
func (s *Session) readDenied(tool string, names ...string) bool {
	if testForceAllow.Load() {
		return false
	}
	return s.checker.ReadDeniedAs(tool, names...)
}
