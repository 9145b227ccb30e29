package engine

import (
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// A deferred call (Decision.Defer) is the one tool call the loop leaves
// without a result on purpose: the run ends with it pending, the history
// ends with the assistant's tool_use, and the next Run settles it before
// its prompt (resumeDeferred). Every other exit answers open calls
// (closeTurn), so a pending call always means a deferral, or a history a
// host restored with its tool_use unanswered for the same reason.

// PendingCalls returns the tool_use blocks of the history's last message
// when it is an assistant message: the calls a deferral left pending, which
// the next Run authorises again before anything else.
func (s *Session) PendingCalls() []model.Content {
	n := len(s.history)
	if n == 0 || s.history[n-1].Role != "assistant" {
		return nil
	}
	var out []model.Content
	for _, b := range s.history[n-1].Content {
		if b.Type == model.TypeToolUse {
			out = append(out, b)
		}
	}
	return out
}

// SetHistoryInterrupted is SetHistory for a history whose last reply's
// calls were cut off by a crash rather than deferred: the next Run gives
// each of them an is_error result with the Interrupted text (recorded like
// any result) before its prompt, instead of authorising them again.
func (s *Session) SetHistoryInterrupted(h []model.Message) {
	s.SetHistory(h)
	s.pendingInterrupted = len(s.PendingCalls()) > 0
}

// resumeDeferred settles the calls a deferral left pending, before the
// run's prompt: each is authorised again (PreToolUse fires again) and runs
// if allowed, its result going first into the user turn that then takes
// the prompt. done is set when the run ends here: the call was deferred
// again, a hook halted, the run was cancelled, or a pending call's tool is
// gone (tool_deferred_unavailable; the call gets an is_error result). In
// those cases the prompt is not sent.
func (r *run) resumeDeferred() (e ending, done bool) {
	calls := r.s.PendingCalls()
	if len(calls) == 0 {
		return ending{}, false
	}
	o := &openCalls{}
	for _, b := range calls {
		o.ids = append(o.ids, b.ID)
	}
	r.open = o
	if r.s.pendingInterrupted {
		// A run that died with these calls in flight (a killed process):
		// they are not run again, the model is told they were
		// interrupted, and the prompt follows in the same user turn.
		r.s.pendingInterrupted = false
		r.closeTurn(Interrupted)
		return ending{}, false
	}
	for _, b := range calls {
		if _, ok := r.s.lookup(b.Name); ok {
			continue
		}
		text := fmt.Sprintf("The deferred %s call (%s) cannot be resumed: the session has no tool named %s.", b.Name, b.ID, b.Name)
		res := r.base(message.ResultErrorDuringExecution, true)
		res.Errors = []string{text + " The prompt was not sent."}
		res.TerminalReason = message.TerminalToolDeferredUnavailable
		res.StopReason = nil
		return unrunBecause(res, "<tool_use_error>"+text+"</tool_use_error>"), true
	}
	if !r.dispatch(&model.Response{Content: calls}) {
		if err := r.ctx.Err(); err != nil {
			return r.aborted(err), true
		}
		return ending{err: ErrStopped}, true
	}
	switch {
	case r.deferred != nil:
		return finish(r.deferredResult()), true
	case r.halt != nil:
		return unrunBecause(r.haltResult(r.halt), haltUnrun), true
	}
	return ending{}, false
}

// deferredResult ends a run on a deferred call: a success result with
// stop_reason and terminal_reason tool_deferred, naming the call.
func (r *run) deferredResult() *message.Result {
	res := r.successResult()
	res.TerminalReason = message.TerminalToolDeferred
	sr := message.StopToolDeferred
	res.StopReason = &sr
	res.DeferredToolUse = r.deferred
	return res
}

// deferredInput is the model's input of a deferred call as the result
// shows it ({} when the model sent none).
func deferredInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	return append(json.RawMessage(nil), in...)
}
