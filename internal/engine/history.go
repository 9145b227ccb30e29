package engine

import "github.com/agentloop/agentloop/model"

// History returns a copy of the conversation so far.
func (s *Session) History() []model.Message {
	h := append([]model.Message(nil), s.history...)
	return s.unsealed(h)
}

// LastReply returns the conversation's last assistant message, or a
// zero Message when there is none. Its blocks are shared with the
// history and not to be changed.
func (s *Session) LastReply() model.Message {
	for i := len(s.history) - 1; i >= 0; i-- {
		if s.history[i].Role == "assistant" {
			return s.history[i]
		}
	}
	return model.Message{}
}

// HistoryLen returns the number of messages in the conversation so far.
func (s *Session) HistoryLen() int { return len(s.history) }

// SetHistory replaces the conversation (for resumed sessions).
// A history that ends with an interrupt's marker gets the reference's
// synthetic assistant turn before the next prompt (answerMarker).
func (s *Session) SetHistory(h []model.Message) {
	s.history = s.sealHistory(append([]model.Message(nil), h...))
	s.ctxMark = contextMark{}
	s.resumedInterrupted = endsInterrupted(s.history)
}
