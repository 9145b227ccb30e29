package subagent

import (
	"encoding/json"
	"maps"
	"sync"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/tool"
)

// Stats counts the subagents of one session for its results'
// subagent_stats. It is safe for concurrent use.
type Stats struct {
	mu sync.Mutex
	s  message.SubagentStats
}

type statsKey struct{}

// StatsFor returns the counters of the session of env.
func StatsFor(env *tool.Env) *Stats {
	return env.State.Load(statsKey{}, func() any { return &Stats{} }).(*Stats)
}

// Snapshot returns a copy of the counts.
func (st *Stats) Snapshot() *message.SubagentStats {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := st.s
	out.ByType = maps.Clone(st.s.ByType)
	if out.ByType == nil {
		out.ByType = map[string]int64{}
	}
	return &out
}

// refused counts a start the budget refused.
func (st *Stats) refused() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Refused.Budget++
}

// spawned counts the start of t, whose Agent call's input is input.
func (st *Stats) spawned(t Task, input json.RawMessage) {
	var in struct {
		RunInBackground *bool `json:"run_in_background"`
	}
	_ = json.Unmarshal(input, &in) // the call was decoded already; a bad input cannot come here
	st.mu.Lock()
	defer st.mu.Unlock()
	s := &st.s
	s.Spawned++
	switch {
	case in.RunInBackground == nil:
		s.Requested.Unset++
	case *in.RunInBackground:
		s.Requested.Background++
	default:
		s.Requested.Foreground++
	}
	if t.Background {
		s.StartedInBackground++
	}
	s.MaxDepth = max(s.MaxDepth, t.Depth)
	if t.Depth > 1 {
		s.SpawnedBySubagents++
	}
	if s.ByType == nil {
		s.ByType = map[string]int64{}
	}
	s.ByType[t.Type]++
}

// ended counts how a run of t ended: completed, failed, or killed by the
// budget (system), by the user's interrupt (a foreground run whose parent
// was interrupted) or by its owner (a background run stopped by TaskStop
// or by its parent's end).
func (st *Stats) ended(t Task, o Outcome) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := &st.s
	switch o.Status() {
	case StatusCompleted:
		s.Completed++
	case StatusFailed:
		s.Failed++
	default:
		switch {
		case o.Result != nil && o.Result.Subtype == message.ResultErrorMaxBudget:
			s.Killed.System++
		case t.Background:
			s.Killed.Parent++
		default:
			s.Killed.User++
		}
	}
}
