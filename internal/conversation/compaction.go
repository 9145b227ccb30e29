package conversation

import (
	"context"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/settings"
)

// compaction configures the engine's compaction from the options and the
// settings (autoCompactEnabled, autoCompactWindow) and connects its hook
// points: PreCompact, PostCompact, SessionStart (source compact), and for
// /clear SessionEnd (reason clear) and SessionStart (source clear). It runs after loadContext, as
// the summary instructions come from the CLAUDE.md text.
func (s *Session) compaction(st *settings.Settings) *engine.Compaction {
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
	c.Compacted = s.compacted
	c.Cleared, c.AfterClear = s.cleared, s.afterClear // clear_session.go
	return c
}

// compacted runs after each compaction of the main conversation, after
// PostCompact: SessionStart with source compact, whose context the engine
// puts at the start of the compacted history, where the next request
// (of this run, after an automatic compaction) sees it. continue:false
// cannot stop a compaction that is done; it is reported.
func (s *Session) compacted(ctx context.Context, trigger string) []string {
	st := s.noteSessionStart("compact", s.hooks.SessionStart(ctx, hooks.SessionStartInput{Base: s.hookBase(), Source: "compact", Model: s.eng.Model()}))
	if st.Halt {
		s.diag.Add(DiagHook, "SessionStart (source compact): continue:false is not honoured after a compaction; the run goes on")
	}
	return st.AdditionalContext
}

// autoCompactOn reports whether the session compacts by itself.
func (s *Session) autoCompactOn() bool {
	c := s.compactCfg
	return c != nil && !c.Disabled
}

// setCompaction builds and keeps the compaction settings.
func (s *Session) setCompaction(st *settings.Settings) *engine.Compaction {
	s.compactCfg = s.compaction(st)
	return s.compactCfg
}
