package engine

import (
	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/model"
)

// sealing reports whether the session's provider takes sealed results.
//
// A session whose provider sends sealed tool results (model.SealedSender)
// keeps each large text result in its history as the JSON it is sent as
// (model.Seal), not also as text: the provider's encoded history shares
// those bytes, so a result is held once, not twice. The history is
// unsealed wherever it leaves the path to the provider: History,
// ContextRequest, SentRequest, compaction, and a request to a provider
// without SealedSender.
func (s *Session) sealing() bool {
	p, ok := s.cfg.Provider.(model.SealedSender)
	return ok && p.SendsSealed()
}

// sealBlocks returns blocks, a user message after calls (the reply
// before it), with their large text results sealed when the provider
// takes them: blocks itself when none is sealed, otherwise a copy (blocks
// may be shared with the record). A ToolSearch result stays text: each
// request reads it again for the definitions it loaded
// (toolsearch.Loaded).
func (s *Session) sealBlocks(blocks, calls []model.Content) []model.Content {
	if !s.sealing() {
		return blocks
	}
	var out []model.Content
	for i := range blocks {
		if searchResult(blocks[i], calls) {
			continue
		}
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
		if msgs[i].Role != "user" {
			continue
		}
		msgs[i].Content = s.sealBlocks(msgs[i].Content, lastCalls(msgs, i))
	}
	return msgs
}

// lastCalls returns the blocks of the last assistant message of msgs
// before index i: the calls whose results a user message at i answers.
func lastCalls(msgs []model.Message, i int) []model.Content {
	for i--; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return msgs[i].Content
		}
	}
	return nil
}

// searchResult reports whether c is the result of a ToolSearch call
// among calls.
func searchResult(c model.Content, calls []model.Content) bool {
	if c.Type != model.TypeToolResult {
		return false
	}
	for i := range calls {
		if calls[i].Type == model.TypeToolUse && calls[i].ID == c.ToolUseID {
			return calls[i].Name == toolsearch.ToolName
		}
	}
	return false
}

// unsealed returns msgs with every sealed block's text read back: msgs
// itself when the session has sealed nothing. Should a block not read
// back (never: the session sealed it), msgs is returned as it is, its
// sealed blocks included, which every encoder still writes as they were.
func (s *Session) unsealed(msgs []model.Message) []model.Message {
	if !s.hasSealed {
		return msgs
	}
	out, _ := model.UnsealMessages(msgs)
	return out
}
