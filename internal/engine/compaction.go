package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// Compaction replaces the older part of the history with a summary the
// model writes, before a request would pass the context window
// (automatic), or when the prompt is "/compact [instructions]" (manual).
// "/clear" empties the history instead. The pure parts (sizes, cuts, the
// summary request) are internal/compact's.

// DefaultContextWindow is the window of a model pricing's table does not
// know.
const DefaultContextWindow = 200_000

// CompactedText is the content of a compact boundary's transcript entry.
// (A /compact run's result text is empty, as the reference's is.)
const CompactedText = "Conversation compacted"

// Compaction configures compaction. A nil Config.Compaction turns it off
// altogether: no automatic compaction, and "/compact" and "/clear" are
// ordinary prompts.
type Compaction struct {
	// Disabled turns automatic compaction off; /compact still works.
	Disabled bool
	// NoCommands makes "/compact" and "/clear" ordinary prompts while
	// automatic compaction stays as Disabled says: a subagent's prompt is
	// the model's text, never a command of the user's.
	NoCommands bool
	// Window is the context window to stay within, in tokens; 0 means
	// the model's (pricing's table, else DefaultContextWindow). The
	// threshold is AutoCompactThreshold of it.
	Window int64
	// ThresholdPercent, in (0, 100], lowers the threshold to that
	// percentage of the window less the output reserve
	// (AutoCompactThresholdPercent); 0 leaves it alone.
	ThresholdPercent float64
	// Instructions are the summary instructions of the CLAUDE.md files,
	// sent with every summary request.
	Instructions string
	// PreCompact runs before each compaction with its trigger ("auto",
	// "manual") and /compact's instructions (nil for none). Blocked
	// skips an automatic compaction (the request goes as it is) and ends
	// a manual one with reason.
	PreCompact func(ctx context.Context, trigger string, custom *string) (blocked bool, reason string)
	// PostCompact runs after each compaction with the summary.
	PostCompact func(ctx context.Context, trigger, summary string)
	// Compacted runs after each compaction, after PostCompact and before
	// the compacted history is recorded and emitted (SessionStart with
	// source compact). The texts it returns reach the model at the start
	// of the compacted history, each wrapped as a system reminder.
	Compacted func(ctx context.Context, trigger string) []string
	// Cleared runs after "/clear" emptied the history and reset the
	// totals: it starts the new conversation (a new session id, say) and
	// returns the message that announces it, nil for none. The loop
	// emits that message, then calls AfterClear.
	Cleared func(ctx context.Context) message.Message
	// AfterClear runs once the new conversation is announced.
	AfterClear func(ctx context.Context)
	// ReadFile reads a file the model had read or written before a
	// compaction, to give it back after the boundary (see
	// compact.Reattach); nil re-attaches nothing.
	ReadFile func(path string) ([]byte, error)
}

// ReattachBudget bounds, in tokens, the files re-attached after a
// compaction; a quarter of the threshold bounds them too.
const ReattachBudget = 50_000

// contextMark is what the session knows of its context size: base tokens
// as the API reported them for the reply that ended at history[mark-1].
// known is false before the first reply, after a compaction and for a
// history set from outside: the whole request is estimated then.
type contextMark struct {
	base  int64
	mark  int
	known bool
}

// noteContext records the context the API reported for the reply just
// committed. Called by the loop after commitReply.
func (s *Session) noteContext(u model.Usage) {
	s.ctxMark = contextMark{
		base:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens,
		mark:  len(s.history),
		known: true,
	}
}

// NoteResumedContext gives a resumed session the context the API reported
// for the reply that ends its history (the transcript keeps its usage), so
// that the next estimate (and a compaction's pre_tokens) counts from it, as
// after a live reply, instead of estimating the whole request. It does
// nothing unless the history ends with an assistant message.
func (s *Session) NoteResumedContext(u model.Usage) {
	if n := len(s.history); n > 0 && s.history[n-1].Role == "assistant" {
		s.noteContext(u)
	}
}

// compactWindow returns the window and the threshold the session compacts
// at.
func (s *Session) compactWindow(modelID string) (window, threshold int64) {
	p, _, known := pricing.Lookup(modelID)
	window = s.cfg.Compaction.Window
	if window <= 0 {
		window = DefaultContextWindow
		if known && p.ContextWindow > 0 {
			window = p.ContextWindow
		}
	}
	return window, AutoCompactThresholdPercent(window, p.MaxOutput, s.cfg.Compaction.ThresholdPercent)
}

// contextEstimate is the estimated size of the next request: the last
// reply's reported context plus an estimate of what was added since, or,
// when there is no reply to count from, an estimate of the whole request.
func (s *Session) contextEstimate() int64 {
	m := s.ctxMark
	if m.known && m.mark <= len(s.history) {
		return m.base + compact.Estimate(s.history[m.mark:])
	}
	return s.fixedEstimate() + compact.Estimate(s.history)
}

// contextBound is a bound on contextEstimate from lengths alone
// (compact.UpperBound): when it is under the threshold, so is the
// estimate, and the new messages need not be encoded to know it.
func (s *Session) contextBound() int64 {
	m := s.ctxMark
	if m.known && m.mark <= len(s.history) {
		return m.base + compact.UpperBound(s.history[m.mark:])
	}
	return s.fixedEstimate() + compact.UpperBound(s.history)
}

// fixedEstimate estimates the system prompt and tool definitions.
// It adds up the lengths of their texts and schemas, plus a little for the
// JSON around each, instead of encoding them: an estimate at four bytes a
// token has no use for the exact bytes, and this runs at the first
// request of every session.
func (s *Session) fixedEstimate() int64 {
	const blockFrame, toolFrame = 48, 64 // {"type":"text","text":…}, {"name":…,"description":…,"input_schema":…}
	var n int
	for _, b := range s.cfg.System {
		n += blockFrame + len(b.Text)
	}
	for i := range s.tools {
		info := s.tools[i].info()
		n += toolFrame + len(info.Name) + len(info.Description) + len(info.InputSchema)
	}
	return int64(n) / 4
}

// autoCompact compacts before a request that would pass the threshold. It
// returns done with the ending when the run must end (the summary request
// failed, the run was cancelled, the consumer left).
func (r *run) autoCompact() (ending, bool) {
	c := r.s.cfg.Compaction
	if c == nil || c.Disabled || r.compactSkipped {
		return ending{}, false
	}
	_, threshold := r.s.compactWindow(r.s.Model())
	if threshold <= 0 || r.s.contextBound() <= threshold || r.s.contextEstimate() <= threshold {
		return ending{}, false
	}
	return r.compactNow(compact.TriggerAuto, nil)
}

// manualCommand runs "/compact" and "/clear" prompts; ok is false for any
// other prompt.
func (r *run) manualCommand(prompt []model.Content) (ending, bool) {
	if c := r.s.cfg.Compaction; c == nil || c.NoCommands || len(prompt) != 1 || prompt[0].Type != model.TypeText {
		return ending{}, false
	}
	name, args, ok := compact.Command(prompt[0].Text)
	if !ok {
		return ending{}, false
	}
	r.numTurns = 0
	if name == "clear" {
		r.s.clear()
		r.spentAtStart = 0
		r.s.budget.started = false // the next run's budget counts afresh
		c := r.s.cfg.Compaction
		if c.Cleared != nil {
			if m := c.Cleared(r.ctx); m != nil {
				if !r.send(m) {
					return ending{err: ErrStopped}, true
				}
			}
		}
		if c.AfterClear != nil {
			c.AfterClear(r.ctx)
		}
		return finish(r.commandResult("")), true
	}
	if len(r.s.history) == 0 {
		res := r.base(message.ResultErrorDuringExecution, true)
		res.Errors = []string{"Not enough messages to compact: the conversation is empty."}
		res.TerminalReason = message.TerminalTurnSetupFailed
		return finish(res), true
	}
	var custom *string
	if args != "" {
		custom = &args
	}
	if e, done := r.compactNow(compact.TriggerManual, custom); done {
		return e, true
	}
	// As the reference does: the command and its output join the history
	// (the next request shows the model that the user compacted), the
	// output line is echoed to the stream, and the result is empty, with
	// no turns (the summary request is not one of the conversation's).
	echo := r.userMessage([]model.Content{model.TextBlock(compact.CommandStdout)}, false)
	echo.IsReplay = true
	r.commitUser(compact.CommandRecord("compact", args), r.userMessage(compact.CommandRecord("compact", args), false))
	if !r.send(echo) {
		return ending{err: ErrStopped}, true
	}
	r.numTurns = 0
	return finish(r.commandResult("")), true
}

// commandResult is the success result of a slash command.
func (r *run) commandResult(text string) *message.Result {
	res := r.base(message.ResultSuccess, false)
	res.Result = &text
	res.TerminalReason = message.TerminalCompleted
	return res
}

// clear empties the history and restarts the running totals.
func (s *Session) clear() {
	s.history = nil
	s.pendingInterrupted = false
	s.ctxMark = contextMark{}
	s.totals.mu.Lock()
	s.totals.cost = 0
	s.totals.models = nil
	s.totals.last = nil
	s.totals.mu.Unlock()
}

// compactNow compacts the history: PreCompact, the summary request,
// PostCompact and Compacted, the boundary and summary in the stream and
// the record. done is
// set (with the ending) when the run must end.
func (r *run) compactNow(trigger string, custom *string) (ending, bool) {
	s, c := r.s, r.s.cfg.Compaction
	defer r.observeCompaction(trigger)()
	if c.PreCompact != nil {
		if blocked, reason := c.PreCompact(r.ctx, trigger, custom); blocked {
			if trigger == compact.TriggerAuto {
				r.compactSkipped = true // not asked again in this run
				return ending{}, false
			}
			res := r.base(message.ResultErrorDuringExecution, true)
			res.Errors = []string{"Compaction was blocked by a PreCompact hook: " + reason}
			res.TerminalReason = message.TerminalHookStopped
			return finish(res), true
		}
	}
	if !r.sendStatus(message.Status{Status: strPtr("compacting")}, "") {
		return ending{err: ErrStopped}, true
	}
	start := s.cfg.Now()
	modelID := s.Model()
	window, threshold := s.compactWindow(modelID)
	pre := s.contextEstimate()
	// The latest model round (the last reply and the results of its tool
	// calls, or the reply a /compact follows) stays verbatim when it takes
	// at most half the threshold, and the summary covers what came before
	// it; a larger round (one tool result that filled the context, say) is
	// summarised with the rest, so the history after the boundary is the
	// summary alone and is sure to be smaller. After the API refused a
	// request as too long (recoverOverflow) nothing is kept: the estimates
	// that sized the round were wrong.
	keep := threshold / 2
	if r.overflowRetried {
		keep = 0
	}
	older, kept := compact.SplitLast(s.unsealed(s.history), keep)
	customText := ""
	if custom != nil {
		customText = *custom
	}
	reserve := window - threshold // the summary's output and a margin
	limit := threshold - s.fixedEstimate() - compact.InstructionOverhead(c.Instructions, customText)
	maxOut := min(reserve, CompactOutputReserve)
	if p, _, ok := pricing.Lookup(modelID); ok && p.MaxOutput > 0 {
		maxOut = min(maxOut, p.MaxOutput)
	}
	req := compact.Request{Model: modelID, History: compact.Shrink(compact.Fit(older, limit), limit),
		MaxTokens: int(maxOut), Instructions: c.Instructions, Custom: customText}.Build()
	callStart := s.cfg.Now()
	resp, err := s.cfg.Provider.Stream(r.ctx, req, model.NopHandler{})
	if resp != nil {
		r.apiTime += resp.Duration
	} else {
		r.apiTime += s.cfg.Now().Sub(callStart)
	}
	if err == nil && compact.SummaryOf(resp.Text()) == "" {
		err = errors.New("the model returned no summary")
	}
	if resp != nil {
		if resp.Model == "" {
			resp.Model = modelID
		}
		s.AddUsage(resp.Model, resp.Usage)
	}
	r.numTurns++
	if err != nil {
		if r.ctx.Err() != nil {
			return r.aborted(r.ctx.Err()), true
		}
		r.sendStatus(message.Status{}, "failed")
		res := r.base(message.ResultErrorDuringExecution, true)
		res.Errors = []string{fmt.Sprintf("Compaction failed: %v", err)}
		res.TerminalReason = message.TerminalAPIError
		res.StopReason = nil
		return finish(res), true
	}
	summary := compact.SummaryOf(resp.Text())
	if c.PostCompact != nil {
		c.PostCompact(r.ctx, trigger, summary)
	}
	opening := append([]model.Content(nil), s.cfg.OpeningContext...)
	if c.Compacted != nil {
		for _, t := range c.Compacted(r.ctx, trigger) {
			opening = append(opening, model.TextBlock(reminder(t)))
		}
	}
	if c.ReadFile != nil {
		budget := min(ReattachBudget, threshold/4)
		for _, t := range compact.Reattach(compact.FilesSeen(older, kept), c.ReadFile, budget) {
			opening = append(opening, model.TextBlock(reminder(t)))
		}
	}
	head := append([]model.Content{model.TextBlock(compact.SummaryText(summary, trigger == compact.TriggerAuto))},
		opening...)
	s.history = s.sealHistory(compact.Compacted(head, kept))
	s.ctxMark = contextMark{}
	s.totals.mu.Lock()
	s.totals.last = nil
	s.totals.mu.Unlock()
	post := s.contextEstimate()
	summaryMsg := r.userMessage([]model.Content{head[0]}, true)
	after := []message.Message{summaryMsg} // recorded after the boundary
	if len(opening) > 0 {
		after = append(after, r.userMessage(opening, true))
	}
	anchor := len(after) - 1
	after = append(after, r.keptCopies(kept)...)
	r.compacted(pre, post, resp)
	metadata := map[string]any{"trigger": trigger, "pre_tokens": pre, "post_tokens": post,
		"duration_ms": s.cfg.Now().Sub(start).Milliseconds()}
	if seg := preservedSegment(after, anchor); seg != nil {
		metadata["preserved_segment"] = seg
		metadata["preserved_messages"] = preservedMessages(after, anchor)
	}
	boundary := &message.System{Subtype: message.SubtypeCompactBoundary, SessionID: s.cfg.Env.SessionID,
		UUID: s.cfg.NewID(), Data: map[string]json.RawMessage{"compact_metadata": mustJSON(metadata)}}
	r.record(boundary)
	for _, m := range after {
		r.record(m)
	}
	if !r.send(boundary) || !r.send(summaryMsg) {
		return ending{err: ErrStopped}, true
	}
	if !r.sendStatus(message.Status{}, "success") {
		return ending{err: ErrStopped}, true
	}
	return ending{}, false
}

// keptCopies are the messages kept after a compaction as they are
// recorded again, after the summary, so that a transcript read back (which
// starts at the boundary) gives the compacted history; none without
// Config.Record. They are not emitted: the stream showed them when they
// were new.
func (r *run) keptCopies(kept []model.Message) []message.Message {
	if r.s.cfg.Record == nil {
		return nil
	}
	var out []message.Message
	for _, m := range kept {
		blocks := append([]model.Content(nil), m.Content...)
		if m.Role == "user" {
			out = append(out, r.userMessage(blocks, true))
			continue
		}
		out = append(out, &message.Assistant{
			Message: message.APIMessage{ID: "msg_" + r.s.cfg.NewID(), Type: "message", Role: "assistant",
				Model: r.s.Model(), Content: blocks, ContextManagement: nullJSON},
			ParentToolUseID: r.s.cfg.ParentToolUseID, SessionID: r.s.cfg.Env.SessionID,
			UUID: r.s.cfg.NewID(), Timestamp: r.timestamp(),
		})
	}
	return out
}

// preservedSegment is compact_metadata's preserved_segment for the
// messages recorded after a boundary: after[anchor] is the last of the
// summary and opening-context lines, and the kept copies follow it. It
// names the first kept copy (head_uuid), the last (tail_uuid) and the
// line the first one follows (anchor_uuid); nil when nothing was kept
// (or nothing is recorded). The copies are recorded in order right after
// the anchor, so the transcript's parentUuid chain already runs anchor →
// head → … → tail: a loader that splices the segment at its anchor finds
// it in place.
func preservedSegment(after []message.Message, anchor int) map[string]string {
	if anchor < 0 || len(after) <= anchor+1 {
		return nil
	}
	return map[string]string{"anchor_uuid": messageUUID(after[anchor]),
		"head_uuid": messageUUID(after[anchor+1]), "tail_uuid": messageUUID(after[len(after)-1])}
}

// preservedMessages is compact_metadata's preserved_messages: the anchor
// and the uuids of the kept copies in order (uuids and all_uuids, which
// the reference fills alike when nothing kept is left out).
func preservedMessages(after []message.Message, anchor int) map[string]any {
	ids := make([]string, 0, len(after)-anchor-1)
	for _, m := range after[anchor+1:] {
		ids = append(ids, messageUUID(m))
	}
	return map[string]any{"anchor_uuid": messageUUID(after[anchor]), "uuids": ids, "all_uuids": ids}
}

func messageUUID(m message.Message) string {
	switch m := m.(type) {
	case *message.User:
		return m.UUID
	case *message.Assistant:
		return m.UUID
	}
	return ""
}

// sendStatus emits a system/status message when partial messages are on;
// result, when set, is its compact_result.
func (r *run) sendStatus(st message.Status, result string) bool {
	if !r.s.cfg.Partial {
		return true
	}
	m := &message.System{Subtype: message.SubtypeStatus, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), Status: &st}
	if result != "" {
		m.Data = map[string]json.RawMessage{"compact_result": mustJSON(result)}
	}
	return r.send(m)
}

func strPtr(s string) *string { return &s }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
