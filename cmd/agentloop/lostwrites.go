package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
)

// lostWrites notices that the session's transcript lost writes (a full
// disk, an unwritable file): from the system/session_writes_lost message
// or from the result's session_writes_lost field. A run whose transcript
// lost writes exits 1 in every output format, and text and json print a
// line on stderr (stream-json carries the message itself); a later resume
// of the session would get a truncated history.
type lostWrites struct {
	lost *message.WritesLost
}

// see records m when it reports lost writes.
func (l *lostWrites) see(m agentloop.Message) {
	switch m := m.(type) {
	case *agentloop.SystemMessage:
		if m.Subtype == "session_writes_lost" && l.lost == nil {
			var w message.WritesLost
			for k, dst := range map[string]any{"error": &w.Error, "error_code": &w.ErrorCode,
				"lost": &w.Lost, "transcript_session_ids": &w.TranscriptSessionIDs} {
				if v, ok := m.Data[k]; ok {
					_ = json.Unmarshal(v, dst) // a malformed field stays empty
				}
			}
			l.lost = &w
		}
	case *agentloop.ResultMessage:
		if m.SessionWritesLost != nil {
			l.lost = m.SessionWritesLost
		}
	}
}

// report prints the loss to stderr (text and json formats) and returns
// whether there was one.
func (l *lostWrites) report(format string, stderr io.Writer) bool {
	if l.lost == nil {
		return false
	}
	if format != "stream-json" {
		what := strings.Join(l.lost.Lost, ", ")
		if what == "" {
			what = "transcript"
		}
		code := ""
		if l.lost.ErrorCode != "" {
			code = " (" + l.lost.ErrorCode + ")"
		}
		fmt.Fprintf(stderr, "agentloop: session writes lost%s: the %s was not fully written, a resume would get a truncated session: %s\n",
			code, what, strings.TrimPrefix(l.lost.Error, "session: "))
	}
	return true
}
