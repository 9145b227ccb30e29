package conversation

import (
	"strings"

	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
)

// resumeHistory is the history a resumed session starts from: the
// transcript's history, with the tool calls of its last reply put back
// when a PreToolUse defer left them pending. Transcript.History drops
// tool_use blocks that have no result, which is right for a session that
// stopped in the middle of a tool round, but a deferred call must survive
// so that the first prompt of the resumed session fires PreToolUse for it
// again (engine: resumeDeferred).
//
// A reply's calls count as deferred when the reply is the last message of
// the main chain and the run's result (its cost-state entry) was written
// after it: a run that ended any other way answered its calls. A reply
// with calls and no result after it is a run that died in the middle of a
// tool round (a killed process): its calls are put back too, and crashed
// is set, so that the next run tells the model they were interrupted
// (engine.SetHistoryInterrupted) instead of dropping them silently or
// running them again.
func resumeHistory(tr *sessions.Transcript) (h []model.Message, crashed bool) {
	h = tr.History()
	blocks, deferred, ok := pendingReply(tr)
	if !ok {
		return h, false
	}
	return withCalls(h, blocks), !deferred
}

// withCalls puts the tool calls of blocks (the last reply) back at the end
// of h.
func withCalls(h []model.Message, blocks []model.Content) []model.Message {
	var calls []model.Content
	for _, b := range blocks {
		if b.Type == model.TypeToolUse {
			calls = append(calls, b)
		}
	}
	if n := len(h); n > 0 && h[n-1].Role == "assistant" {
		// History kept the reply's other blocks (its text, thinking).
		h[n-1].Content = append(append([]model.Content(nil), h[n-1].Content...), calls...)
		return h
	}
	var keep []model.Content
	for _, b := range blocks {
		if b.Type == model.TypeText && strings.TrimSpace(b.Text) == "" {
			continue
		}
		keep = append(keep, b)
	}
	return append(h, model.Message{Role: "assistant", Content: keep})
}

// pendingReply returns the blocks of the main chain's last reply when it
// ends the chain and holds tool calls; deferred reports whether a result
// was recorded after it.
func pendingReply(tr *sessions.Transcript) (blocks []model.Content, deferred, ok bool) {
	var id, last string
	for i := len(tr.Chain) - 1; i >= 0; i-- {
		e := tr.Chain[i]
		if e.Message == nil || e.IsSidechain {
			continue
		}
		if e.Type != sessions.TypeAssistant || e.IsAPIErrorMessage || e.Message.Model == "<synthetic>" {
			break
		}
		if last == "" {
			last = e.UUID
			id = e.Message.ID
		} else if e.Message.ID != id || id == "" {
			break
		}
		blocks = append(append([]model.Content(nil), e.Message.Content...), blocks...)
	}
	hasCall := false
	for _, b := range blocks {
		hasCall = hasCall || b.Type == model.TypeToolUse
	}
	if !hasCall {
		return nil, false, false
	}
	// The result of the run that deferred is written after the reply.
	seen := false
	for _, e := range tr.Entries {
		switch {
		case e.UUID == last && last != "":
			seen = true
		case seen && e.Type == sessions.TypeCostState:
			return blocks, true, true
		}
	}
	return blocks, false, seen
}
