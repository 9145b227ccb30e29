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
	lazy := LazyTool(agents, func() *Spawner { made.Add(1); return sp }, lineage.Agent{MaxTurns: 3}, nil)
	if diff := cmp.Diff(sp.Tool(lineage.Agent{MaxTurns: 3}, nil).Info(), lazy.Info()); diff != "" {
		t.Errorf("LazyTool's Info differs from Spawner.Tool's (-eager +lazy):\n%s", diff)
	}
	if made.Load() != 0 {
		t.Error("describing the tool made its spawner")
	}
}
