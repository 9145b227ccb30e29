package conversation

import (
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// SubtypeSessionTitleChanged is the subtype of the system message that
// announces the session's title (Options.Title), with the member "title".
const SubtypeSessionTitleChanged = "session_title_changed"

// announceTitle queues the session_title_changed message of
// Options.Title, if set, to follow the first system/init message.
func (s *Session) announceTitle() {
	title := s.title()
	if title == "" {
		return
	}
	s.diag.Announce(func(sessionID string) message.Message {
		return titleChanged(sessionID, title)
	})
}

// titleChanged is the system/session_title_changed message of title.
func titleChanged(sessionID, title string) *message.System {
	t, _ := json.Marshal(title)
	return &message.System{Subtype: SubtypeSessionTitleChanged, SessionID: sessionID, UUID: uuid.NewString(),
		Data: map[string]json.RawMessage{"title": t}}
}

// writeTitle queues the custom-title entry of Options.Title, if set, to
// be written to the transcript w ahead of its first entry: it does not
// create the transcript by itself.
func (s *Session) writeTitle(w *sessions.Writer) {
	if s.title() != "" {
		w.Defer(sessions.CustomTitleEntry(s.env.SessionID, s.title()))
	}
}

// title is the title /rename set or else Options.Title, without
// surrounding space; a title of spaces alone is none, as session.Rename
// has it.
func (s *Session) title() string {
	if s.renamed != "" {
		return s.renamed
	}
	return strings.TrimSpace(s.opts.Title)
}
