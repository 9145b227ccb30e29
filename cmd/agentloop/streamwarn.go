package main

import (
	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
)

// afterInit returns the command line's warnings (config.warnings) as
// diagnostic messages (system/informational, tag "option_ignored") to write right
// after m when m is the session's first system/init message, so that a
// host reading stream-json sees them as well as stderr; nil for every
// other message and for every later init. It is called from one
// goroutine only.
func (c *config) afterInit(m agentloop.Message) []agentloop.Message {
	sm, ok := m.(*agentloop.SystemMessage)
	if !ok || sm.Subtype != message.SubtypeInit || c.warningsStreamed {
		return nil
	}
	c.warningsStreamed = true
	out := make([]agentloop.Message, 0, len(c.warnings))
	for _, w := range c.warnings {
		out = append(out, agentloop.DiagnosticMessage(sm.SessionID, agentloop.Diagnostic{Tag: agentloop.DiagOption, Text: w}))
	}
	return out
}
