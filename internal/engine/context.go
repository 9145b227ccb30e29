package engine

import (
	"slices"

	"github.com/agentloop/agentloop/model"
)

// Measuring the context (the host's context-usage report) and the point
// at which the context counts as full.

// Auto-compaction numbers, in tokens: the threshold is the window less the
// output reserved for a summary (at most CompactOutputReserve, less for a
// model with smaller replies) less AutoCompactBuffer. The compaction work
// and the context-usage report both use [AutoCompactThreshold].
const (
	CompactOutputReserve = 20_000
	AutoCompactBuffer    = 13_000
)

// AutoCompactThreshold returns the input size, in tokens, past which a
// conversation on a model with this context window and maximum output
// should be compacted: window − min(maxOutput, CompactOutputReserve) −
// AutoCompactBuffer, and never below zero. A maxOutput of 0 counts as
// CompactOutputReserve. For small windows (a configured autoCompactWindow
// under 200k tokens) the reserve is at most a tenth of the window and the
// buffer at most a fifteenth, so that the threshold stays a useful part of
// the window; for the models' own windows this changes nothing.
func AutoCompactThreshold(window, maxOutput int64) int64 {
	reserve := min(int64(CompactOutputReserve), window/10)
	if maxOutput > 0 {
		reserve = min(maxOutput, reserve)
	}
	buffer := min(int64(AutoCompactBuffer), window/15)
	return max(window-reserve-buffer, 0)
}

// AutoCompactThresholdPercent is AutoCompactThreshold lowered to pct
// percent of the window less the output reserve, when pct is in (0, 100]:
// the percentage can only bring compaction earlier, never later, as the
// reference treats CLAUDE_AUTOCOMPACT_PCT_OVERRIDE. Any other pct leaves
// the threshold as it is.
func AutoCompactThresholdPercent(window, maxOutput int64, pct float64) int64 {
	t := AutoCompactThreshold(window, maxOutput)
	if !(pct > 0 && pct <= 100) {
		return t
	}
	reserve := min(int64(CompactOutputReserve), window/10)
	if maxOutput > 0 {
		reserve = min(maxOutput, reserve)
	}
	return min(int64(float64(window-reserve)*pct/100), t)
}

// ContextRequest returns the request the session's next model call would
// send with the history as it is (system prompt, tools, messages), for
// measuring it. The request is the caller's to change.
func (s *Session) ContextRequest() *model.Request {
	r := s.buildRequest(s.Model())
	r.Messages = s.unsealed(r.Messages)
	// The system blocks and tool definitions are shared with the
	// session's requests (systemBlocks, declaredTools).
	r.System, r.Tools = slices.Clone(r.System), slices.Clone(r.Tools)
	return r
}

// SentRequest returns a copy of the request of the session's latest
// model call, or nil before the first: the context as the model last saw
// it, without the reply to it. Unlike ContextRequest it is safe to call
// while a run is in progress, from any goroutine; the copy's slices are
// the caller's, their elements shared and not to be changed.
func (s *Session) SentRequest() *model.Request {
	r := s.sent.Load()
	if r == nil {
		return nil
	}
	cp := *r
	cp.Messages, _ = model.UnsealMessages(slices.Clone(r.Messages))
	cp.System = slices.Clone(r.System)
	cp.Tools = slices.Clone(r.Tools)
	cp.Betas = slices.Clone(r.Betas)
	cp.Memo = nil // the session's own
	return &cp
}

// LastUsage returns the usage of the session's latest reply and the model
// that gave it; ok is false before the first reply. A resumed session has
// none until it gets a reply. Safe for concurrent use.
func (s *Session) LastUsage() (u model.Usage, modelID string, ok bool) {
	s.totals.mu.Lock()
	defer s.totals.mu.Unlock()
	if s.totals.last == nil {
		return model.Usage{}, "", false
	}
	return *s.totals.last, s.totals.lastModel, true
}
