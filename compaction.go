package agentloop

import (
	"context"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/settings"
)

// compaction configures the engine's compaction from the options and the
// settings (autoCompactEnabled, autoCompactWindow) and connects its hook
// points: PreCompact, PostCompact, and for /clear SessionEnd (reason
// clear) and SessionStart (source clear). It runs after loadContext, as
// the summary instructions come from the CLAUDE.md text.
func (s *session) compaction(st *settings.Settings) *engine.Compaction {
	c := &engine.Compaction{
		Disabled:     s.opts.DisableAutoCompact || (st.AutoCompactEnabled != nil && !*st.AutoCompactEnabled),
		Window:       s.opts.AutoCompactWindow,
		Instructions: compact.MemoryInstructions(s.memory),
	}
	if c.Window == 0 {
		c.Window = st.AutoCompactWindow
	}
	c.PreCompact = func(ctx context.Context, trigger string, custom *string) (bool, string) {
		r := s.hooks.PreCompact(ctx, hooks.PreCompactInput{Base: s.hookBase(), Trigger: trigger, CustomInstructions: custom})
		return r.Blocked, r.Reason
	}
	c.PostCompact = func(ctx context.Context, trigger, summary string) {
		s.hooks.PostCompact(ctx, hooks.PostCompactInput{Base: s.hookBase(), Trigger: trigger, CompactSummary: summary})
	}
	c.Cleared = s.cleared
	return c
}

// cleared runs after /clear emptied the conversation: the old
// conversation ends (SessionEnd, reason clear) and a new one starts
// (SessionStart, source clear). What SessionStart adds for the model goes
// with the next prompt, and the transcript starts a new chain, so that a
// resume goes on from the new conversation.
func (s *session) cleared(ctx context.Context) {
	if s.transcript != nil {
		s.transcript.r.NewChain()
	}
	s.hooks.SessionEnd(ctx, hooks.SessionEndInput{Base: s.hookBase(), Reason: "clear"})
	st := s.hooks.SessionStart(ctx, hooks.SessionStartInput{Base: s.hookBase(), Source: "clear", Model: s.eng.Model()})
	s.started = true
	s.clearContext = append(s.clearContext, st.AdditionalContext...)
}

// autoCompactOn reports whether the session compacts by itself.
func (s *session) autoCompactOn() bool {
	c := s.compactCfg
	return c != nil && !c.Disabled
}

// setCompaction builds and keeps the compaction settings.
func (s *session) setCompaction(st *settings.Settings) *engine.Compaction {
	s.compactCfg = s.compaction(st)
	return s.compactCfg
}
