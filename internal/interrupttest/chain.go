// Package interrupttest holds what the interrupt tests of the loop and of
// serve share: a description of a transcript's main chain that tells the
// interruption's traces (partial reply, stopped and rejected results)
// apart from ordinary content.
package interrupttest

import (
	"strings"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
)

// ChainShape describes tr's main chain, one item per content block:
// "role: text" for a text, "assistant: partial text" for a text that is a
// proper prefix of long (the reply the interrupt cut), "call NAME",
// "stopped ID" and "rejected ID" for the interruption's results, "result
// ID TEXT" for others, and the block type for the rest. Meta entries are
// left out.
func ChainShape(tr *session.Transcript, long string) []string {
	var got []string
	for _, e := range tr.Chain {
		if e.Message == nil || e.IsMeta {
			continue
		}
		for _, b := range e.Message.Content {
			s := e.Message.Role + ": "
			switch {
			case b.Type == model.TypeText && e.Message.Role == "assistant" && b.Text != long && strings.HasPrefix(long, b.Text):
				s += "partial text"
			case b.Type == model.TypeText:
				s += b.Text
			case b.Type == model.TypeToolUse:
				s += "call " + b.Name
			case b.Type == model.TypeToolResult && b.ResultText() == engine.StoppedText:
				s += "stopped " + b.ToolUseID
			case b.Type == model.TypeToolResult && b.ResultText() == engine.RejectedText:
				s += "rejected " + b.ToolUseID
			case b.Type == model.TypeToolResult:
				s += "result " + b.ToolUseID + " " + b.ResultText()
			default:
				s += b.Type
			}
			got = append(got, s)
		}
	}
	return got
}
