package conversation

import (
	"context"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
)

// subagentCompaction is the compaction of the subagent agent's own
// history. It follows the session's (on or off, the settings'
// autoCompactEnabled and Options.DisableAutoCompact), with the window of
// def.AutoCompactWindow when set, else the session's configured window,
// else the subagent model's. PreCompact and PostCompact hooks run with the
// subagent's agent_id and agent_type; the summary request's cost is the
// subagent's, so it counts in the session's total and shared budget like
// every other request of the subagent. The summary instructions of the
// CLAUDE.md files apply unless def.OmitClaudeMd; the files the subagent
// had seen are re-attached after the boundary as in the main conversation. "/compact" and "/clear"
// are not commands in a subagent (its prompt is the model's text). It
// returns nil when the session has no compaction at all.
func (s *Session) subagentCompaction(def AgentDefinition, agent lineage.Agent) *engine.Compaction {
	main := s.compactCfg
	if main == nil {
		return nil
	}
	c := &engine.Compaction{Disabled: main.Disabled, NoCommands: true, Window: main.Window, ReadFile: main.ReadFile}
	if def.AutoCompactWindow > 0 {
		c.Window = int64(def.AutoCompactWindow)
	}
	if !def.OmitClaudeMd {
		c.Instructions = compact.MemoryInstructions(s.memory)
	}
	d := s.lin.Hooks()
	c.PreCompact = func(ctx context.Context, trigger string, custom *string) (bool, string) {
		r := d.PreCompact(ctx, hooks.PreCompactInput{Base: s.hookBaseFor(agent), Trigger: trigger, CustomInstructions: custom})
		return r.Blocked, r.Reason
	}
	c.PostCompact = func(ctx context.Context, trigger, summary string) {
		d.PostCompact(ctx, hooks.PostCompactInput{Base: s.hookBaseFor(agent), Trigger: trigger, CompactSummary: summary})
	}
	return c
}
