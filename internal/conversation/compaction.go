package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// compaction configures the engine's compaction from the options and the
// settings (autoCompactEnabled, autoCompactWindow) and connects its hook
// points: PreCompact, PostCompact, SessionStart (source compact), and for
// /clear SessionEnd (reason clear) and SessionStart (source clear). It runs after loadContext, as
// the summary instructions come from the CLAUDE.md text.
func (s *Session) compaction(st *settings.Settings) *engine.Compaction {
	c := &engine.Compaction{
		Disabled: s.opts.DisableAutoCompact || (st.AutoCompactEnabled != nil && !*st.AutoCompactEnabled) ||
			envTrue(s.clientGetenv(EnvDisableAutoCompact)),
		Window:       s.opts.AutoCompactWindow,
		Instructions: compact.MemoryInstructions(s.memory),
		ReadFile:     os.ReadFile,
	}
	if c.Window == 0 {
		c.Window = s.envCompactWindow()
	}
	if c.Window == 0 {
		c.Window = st.AutoCompactWindow
	}
	c.ThresholdPercent = s.envCompactPercent()
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
	st := s.noteSessionStart("compact", s.hooks.SessionStart(ctx, hooks.SessionStartInput{Base: s.hookBase(), Source: "compact", Model: s.engine().Model()}))
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

// The environment variables of automatic compaction, as the reference
// reads them.
const (
	// EnvAutoCompactWindow sets the window automatic compaction works
	// against ("200000", "200k", "1m"); below MinEnvCompactWindow it is
	// raised to that. Options.AutoCompactWindow wins over it, and it
	// wins over the settings' autoCompactWindow.
	EnvAutoCompactWindow = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
	// EnvDisableAutoCompact ("1", "true") turns automatic compaction
	// off; /compact still works.
	EnvDisableAutoCompact = "DISABLE_AUTO_COMPACT"
	// MinEnvCompactWindow is the least window EnvAutoCompactWindow sets.
	MinEnvCompactWindow = 100_000
	// EnvAutoCompactPercent ("50", "12.5") brings automatic compaction
	// earlier: at that percentage of the window less the output reserve,
	// when that is below the usual threshold. It cannot bring it later.
	EnvAutoCompactPercent = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
)

// envCompactPercent is the percentage EnvAutoCompactPercent asks for, 0
// when it is unset. A value that is not a number in (0, 100] is reported
// and ignored.
func (s *Session) envCompactPercent() float64 {
	v := strings.TrimSpace(s.clientGetenv(EnvAutoCompactPercent))
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || !(f > 0 && f <= 100) {
		s.diag.Add(DiagSettings, fmt.Sprintf("%s=%q is not a percentage above 0 and at most 100; the usual threshold applies", EnvAutoCompactPercent, v))
		return 0
	}
	return f
}

// envCompactWindow is the window EnvAutoCompactWindow asks for, 0 when
// it is unset. A value that is not a size is reported and ignored.
func (s *Session) envCompactWindow() int64 {
	v := strings.TrimSpace(s.clientGetenv(EnvAutoCompactWindow))
	if v == "" {
		return 0
	}
	n, err := parseTokens(v)
	if err != nil {
		s.diag.Add(DiagSettings, fmt.Sprintf("%s=%q is not a size in tokens (such as 200000 or 200k); the default window applies", EnvAutoCompactWindow, v))
		return 0
	}
	if n < MinEnvCompactWindow {
		s.diag.Add(DiagSettings, fmt.Sprintf("%s=%q is below %d tokens; %d applies", EnvAutoCompactWindow, v, MinEnvCompactWindow, MinEnvCompactWindow))
		n = MinEnvCompactWindow
	}
	return n
}

// parseTokens reads a token count: digits, optionally with a k or m suffix
// (thousands, millions); "_" and "," may group the digits.
func parseTokens(v string) (int64, error) {
	mult := int64(1)
	switch strings.ToLower(v[len(v)-1:]) {
	case "k":
		mult, v = 1_000, v[:len(v)-1]
	case "m":
		mult, v = 1_000_000, v[:len(v)-1]
	}
	v = strings.NewReplacer("_", "", ",", "").Replace(strings.TrimSpace(v))
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f*float64(mult) > 1e12 {
		return 0, fmt.Errorf("not a token count: %q", v)
	}
	return int64(f * float64(mult)), nil
}

// envTrue reports whether an environment flag is set: "1", "true", "yes",
// "on" in any case.
func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// lastReplyUsage returns the usage of the reply that ends the transcript's
// main chain; ok is false when the chain ends with anything else or the
// usage is missing.
func lastReplyUsage(tr *sessions.Transcript) (u model.Usage, ok bool) {
	for i := len(tr.Chain) - 1; i >= 0; i-- {
		e := tr.Chain[i]
		if e.Message == nil || e.IsSidechain {
			continue
		}
		if e.Type != sessions.TypeAssistant || len(e.Message.Usage) == 0 || json.Unmarshal(e.Message.Usage, &u) != nil {
			return model.Usage{}, false
		}
		return u, true
	}
	return model.Usage{}, false
}
