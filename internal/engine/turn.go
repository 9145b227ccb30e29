package engine

import (
	"fmt"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// The history (what the next request sends) and the record (Config.Record,
// which the host writes to the transcript) change together, here and only
// here, so that a transcript read back gives the history the session holds:
//
//	commitUser   a user turn: the prompt, synthetic text, tool results
//	commitReply  a finished reply, as the blocks the stream showed
//	closeTurn    at every exit of Run, an is_error result for each call of
//	             the last reply that has none, so the next request is valid
//	             (closeInterrupted when the run was interrupted: the same,
//	             shown, then the marker; interrupt.go)
//
// Consecutive messages of one role are merged in memory, as the API and a
// transcript read back both treat them as one turn.

// Interrupted is the reference's marker for a run interrupted while (or
// before) its tools ran: the text of the user line that ends it
// (interrupt.go). It is also the result text of a call left unrun when the
// consumer stopped reading, or when a resumed history ends with calls a
// killed process never answered (SetHistoryInterrupted).
const Interrupted = "[Request interrupted by user for tool use]"

// openCalls are the tool calls of the last committed reply while their
// results are being collected.
type openCalls struct {
	ids     []string
	results []model.Content   // the tool_result blocks, in completion order
	msgs    []message.Message // their stream messages, for the record
	extra   []string          // context for the model, sent after the results
	follow  []model.Content   // tool.Result.FollowUp, after the results
	fmsgs   []message.Message // their stream messages
}

func (o *openCalls) has(id string) bool {
	for _, r := range o.results {
		if r.ToolUseID == id {
			return true
		}
	}
	return false
}

// record hands m to the host's recorder, if any.
func (r *run) record(m message.Message) {
	if r.s.cfg.Record != nil && m != nil {
		r.s.cfg.Record(m)
	}
}

// appendHistory adds blocks as a message of role, merged into the last
// message when it has the same role.
func (s *Session) appendHistory(role string, blocks []model.Content) {
	if len(blocks) == 0 {
		return
	}
	if role == "user" {
		blocks = s.sealBlocks(blocks, lastCalls(s.history, len(s.history)))
	}
	if n := len(s.history); n > 0 && s.history[n-1].Role == role {
		merged := append([]model.Content(nil), s.history[n-1].Content...)
		if last := &merged[len(merged)-1]; role == "user" && isMarker(*last) {
			// The reference sends an interrupt's marker followed by a
			// newline when the next prompt joins its turn.
			last.Text += "\n"
		}
		merged = append(merged, blocks...)
		s.history[n-1] = model.Message{Role: role, Content: merged}
		return
	}
	s.history = append(s.history, model.Message{Role: role, Content: blocks})
}

// commitUser adds a user turn to the history and records msgs, which hold
// the same blocks in the same order.
func (r *run) commitUser(blocks []model.Content, msgs ...message.Message) {
	r.s.appendHistory("user", blocks)
	for _, m := range msgs {
		r.record(m)
	}
}

// userMessage is a user line of this session at the current time.
func (r *run) userMessage(blocks []model.Content, synthetic bool) *message.User {
	return &message.User{
		Message:         message.UserContent{Role: "user", Content: blocks},
		ParentToolUseID: r.s.cfg.ParentToolUseID, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), Timestamp: r.timestamp(), IsSynthetic: synthetic,
	}
}

// commitPrompt adds the prompt, and the context hooks added to it, as the
// user turn that opens the run; the conversation's first prompt is
// preceded by Config.OpeningContext. It returns the prompt's message.
func (r *run) commitPrompt(prompt, context []model.Content) *message.User {
	return r.commitPromptAs(promptID(r.ctx), prompt, context)
}

// commitPromptAs is commitPrompt for a prompt whose line has the uuid id
// ("" for a fresh one): a run's prompt, or a message folded into the run.
func (r *run) commitPromptAs(id string, prompt, context []model.Content) *message.User {
	var blocks []model.Content
	var msgs []message.Message
	if opening := r.s.cfg.OpeningContext; len(r.s.history) == 0 && len(opening) > 0 {
		blocks = append(blocks, opening...)
		msgs = append(msgs, r.userMessage(append([]model.Content(nil), opening...), true))
	}
	blocks = append(append(blocks, prompt...), context...)
	pm := r.userMessage(prompt, false)
	if id != "" {
		pm.UUID = id
	}
	msgs = append(msgs, pm)
	if len(context) > 0 {
		msgs = append(msgs, r.userMessage(context, true))
	}
	r.commitUser(blocks, msgs...)
	return pm
}

// commitReply adds a finished reply to the history as the blocks the stream
// showed (empty text blocks are neither shown nor sent back, as the API
// rejects them), records them, and opens its tool calls.
func (r *run) commitReply(shown []*message.Assistant) {
	var blocks []model.Content
	var ids []string
	for _, m := range shown {
		for _, b := range m.Message.Content {
			blocks = append(blocks, b)
			if b.Type == model.TypeToolUse {
				ids = append(ids, b.ID)
			}
		}
	}
	r.s.appendHistory("assistant", blocks)
	for _, m := range shown {
		r.record(m)
	}
	r.folded = nil // this reply answered them
	r.open = nil
	if len(ids) > 0 {
		r.open = &openCalls{ids: ids}
	}
}

// addResult collects one tool result of the open calls.
func (r *run) addResult(block model.Content, m message.Message) {
	r.open.results = append(r.open.results, block)
	r.open.msgs = append(r.open.msgs, m)
}

// sendFollowUp adds a tool's follow-up content (tool.Result.FollowUp) to
// the open turn, after its results, and emits it as a synthetic user
// message, which counts as a turn as in the reference. It returns false if
// the consumer is gone.
func (r *run) sendFollowUp(blocks []model.Content) bool {
	m := r.userMessage(blocks, true)
	r.open.follow = append(r.open.follow, blocks...)
	r.open.fmsgs = append(r.open.fmsgs, m)
	r.numTurns++
	return r.send(m)
}

// commitResults adds the results of the open calls, and the context for the
// model after them, as one user turn.
func (r *run) commitResults() {
	o := r.open
	r.open = nil
	if o == nil {
		return
	}
	blocks := append(append([]model.Content(nil), o.results...), o.follow...)
	msgs := append(append([]message.Message(nil), o.msgs...), o.fmsgs...)
	if len(o.extra) > 0 {
		blocks, msgs = r.withExtra(o.extra, blocks, msgs)
	}
	r.commitUser(blocks, msgs...)
}

// withExtra adds the context hooks and tools gave (extra) to the results'
// blocks and messages. Not inlined: its blocks would sit in commitResults'
// frame, under the history's and the transcript's writes, deep in a turn's
// stack (see streamOnce).
//
//go:noinline
func (r *run) withExtra(extra []string, blocks []model.Content, msgs []message.Message) ([]model.Content, []message.Message) {
	var ctx []model.Content
	for _, c := range extra {
		ctx = append(ctx, model.TextBlock(reminder(c)))
	}
	return append(blocks, ctx...), append(msgs, r.userMessage(ctx, true))
}

// closeTurn is where every run ends: the calls of the last reply that have
// no result yet get an is_error result saying why (text), after the results
// that did arrive, in the history and in the record alike. The stream does
// not show these results: the run is over.
//
// The one exception is a deferred call (run.deferred): it stays pending,
// answered by the next run (see resumeDeferred).
func (r *run) closeTurn(text string) {
	o := r.open
	if o == nil || r.deferred != nil {
		return
	}
	for _, id := range o.ids {
		if o.has(id) {
			continue
		}
		t := true
		block := model.Content{Type: model.TypeToolResult, ToolUseID: id, Text: text, IsError: &t}
		m := r.userMessage([]model.Content{block}, false)
		m.ToolUseResult = "Error: " + text
		r.addResult(block, m)
	}
	r.commitResults()
}

// ending is how the loop ended: the result to emit (nil when the consumer
// stopped reading), the error for Run's caller, and the text for calls
// left without a result.
type ending struct {
	res    *message.Result
	err    error
	unrun  string
	silent bool // the result is recorded but not emitted (err is set)
	// interrupted: the run's context was cancelled; the run ends as
	// interrupt.go describes (closeInterrupted) instead of closeTurn.
	interrupted bool
}

// finish ends the loop with a result.
func finish(res *message.Result) ending { return ending{res: res} }

// unrunBecause ends the loop with a result; calls left without a result
// are told why.
func unrunBecause(res *message.Result, why string) ending { return ending{res: res, unrun: why} }

// budgetUnrun is the result text of calls a reply asked for when it spent
// the rest of the budget.
func budgetUnrun(max float64) string {
	return fmt.Sprintf("The budget of $%s was reached before this tool could run.", formatUSD(max))
}

// haltUnrun is the result text of calls a hook's halt left unrun.
const haltUnrun = "A hook stopped the run before this tool could run."
