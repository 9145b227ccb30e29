package subagent

import (
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/google/go-cmp/cmp"
)

// LazyTool describes itself as Spawner.Tool does, without making the
// spawner: an idle session's Agent tool keeps none.
func TestLazyToolInfo(t *testing.T) {
	agents := func() map[string]Definition {
		return Definitions(nil, map[string]Definition{"reviewer": {Description: "Reviews code", Prompt: "Review."}})
	}
	sp := &Spawner{Agents: agents}
	var made atomic.Int32
	lazy := LazyTool(testSource{agents: agents, spawner: func() *Spawner { made.Add(1); return sp }})
	if diff := cmp.Diff(sp.Tool(lineage.Agent{MaxTurns: 3}, nil).Info(), lazy.Info()); diff != "" {
		t.Errorf("LazyTool's Info differs from Spawner.Tool's (-eager +lazy):\n%s", diff)
	}
	if made.Load() != 0 {
		t.Error("describing the tool made its spawner")
	}
}

type testSource struct {
	agents  func() map[string]Definition
	spawner func() *Spawner
}

func (t testSource) Agents() map[string]Definition { return t.agents() }
func (t testSource) Spawner() *Spawner             { return t.spawner() }
func (t testSource) Parent() lineage.Agent         { return lineage.Agent{MaxTurns: 3} }
func (t testSource) ParentTools() []string         { return nil }
