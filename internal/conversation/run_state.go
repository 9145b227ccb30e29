package conversation

import (
	"sync"
	"sync/atomic"
)

// runState is what only a session's runs fill: its concurrent maps and a
// file command's turn. An idle session keeps one pointer for it, and the
// first use makes it (run).
type runState struct {
	checked     sync.Map                         // tool_use id → the path its permission check resolved (file tools; checked.go)
	granted     sync.Map                         // skill name → struct{}: its allowed-tools were granted (projectfiles.go)
	modes       sync.Map                         // subagent id → permission.Mode: a subagent's own mode (projectfiles.go)
	policyNoted sync.Map                         // what the policy made ignored, reported once (managed_policy.go)
	cmdTurn     commandTurn                      // a file command's allowed-tools and model for its run (command_hooks.go)
	mainAuth    atomic.Pointer[cachedAuthorizer] // the main loop's Authorizer (permission.go)
}

// run returns the session's runState, making it at the first call. Safe
// for concurrent use: callers racing to make it get the same one.
func (s *Session) run() *runState {
	if r := s.rs.Load(); r != nil {
		return r
	}
	s.rs.CompareAndSwap(nil, new(runState))
	return s.rs.Load()
}
