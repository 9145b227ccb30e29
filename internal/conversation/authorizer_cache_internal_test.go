package conversation

import (
	"testing"

	"github.com/agentloop/agentloop/internal/lineage"
)

// TestMainAuthorizerKept: the main loop's Authorizer is made once and
// shared by later tool calls of the same loop; a subagent's, or the main
// loop's made for another Agent value, is not taken from it.
func TestMainAuthorizerKept(t *testing.T) {
	s := &Session{opts: &Config{}}
	main := lineage.Agent{MaxTurns: 5}
	first := s.authorizerFor(main)
	if again := s.authorizerFor(main); again != first {
		t.Error("the main loop's second call made a new Authorizer")
	}
	if sub := s.authorizerFor(lineage.Agent{ID: "agent-1", Depth: 1, MaxTurns: 5}); sub == first {
		t.Error("a subagent got the main loop's Authorizer")
	}
	other := s.authorizerFor(lineage.Agent{MaxTurns: 6})
	if other == first {
		t.Error("the main loop with another turn limit got the Authorizer made for the first")
	}
	if n := testing.AllocsPerRun(50, func() { s.authorizerFor(lineage.Agent{MaxTurns: 6}) }); n != 0 {
		t.Errorf("a kept Authorizer costs %v allocations per call, want 0", n)
	}
}
