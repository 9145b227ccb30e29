package engine

import "github.com/agentloop/agentloop/model"

// A session whose provider sends sealed tool results (model.SealedSender)
// keeps each large text result in its history as the JSON it is sent as
// (model.Seal), not also as text: the provider's encoded history shares
// those bytes, so a result is held once, not twice. The history is
// unsealed wherever it leaves the path to the provider: History,
// ContextRequest, SentRequest, compaction, and a request to a provider
// without SealedSender.

// sealing reports whether the session's provider takes sealed results.
func (s *Session) sealing() bool {
	p, ok := s.cfg.Provider.(model.SealedSender)
	return ok && p.SendsSealed()
}

// sealBlocks returns blocks with their large text results sealed when the
// provider takes them: blocks itself when none is sealed, otherwise a
// copy (blocks may be shared with the record).
func (s *Session) sealBlocks(blocks []model.Content) []model.Content {
	if !s.sealing() {
		return blocks
	}
	var out []model.Content
	for i := range blocks {
		c, ok := model.Seal(blocks[i])
		if !ok {
			continue
		}
		if out == nil {
			out = append([]model.Content(nil), blocks...)
		}
		out[i] = c
		s.hasSealed = true
	}
	if out == nil {
		return blocks
	}
	return out
}

// sealHistory seals the large text results of msgs (a history given to
// the session, or what compaction kept) in place of their text.
func (s *Session) sealHistory(msgs []model.Message) []model.Message {
	for i := range msgs {
		if msgs[i].Role == "user" {
			msgs[i].Content = s.sealBlocks(msgs[i].Content)
		}
	}
	return msgs
}

// unsealed returns msgs with every sealed block's text read back: msgs
// itself when the session has sealed nothing. A block that cannot be read
// back (never: the session sealed it) stays sealed, which every encoder
// still writes as it was.
func (s *Session) unsealed(msgs []model.Message) []model.Message {
	if !s.hasSealed {
		return msgs
	}
	out, _ := model.UnsealMessages(msgs)
	return out
}
