package conversation

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/diag"
	"github.com/agentloop/agentloop/message"
)

// The transcript's lock is held while the session works, not while it
// waits: the session takes it (sessions.Writer.Hold) when a run starts
// and gives it up (Release) when the run ends, and when it has opened.
// Another process may so resume or load a session whose holder is alive
// but idle (an editor's session between prompts, a host waiting for
// input), as the reference allows; a session in the middle of a run is
// still refused with ErrSessionBusy, at open and at the start of a run,
// so two runs never interleave their entries. When the session was
// written by another process while this one was idle, this one's next
// entries continue its own history: the transcript branches there (the
// newest branch is what a later resume reads), and a transcript
// diagnostic says so. Writes made between runs (at Close) take the lock
// for that write alone.

// hold takes the transcript's lock for a run.
func (t *transcript) hold() error {
	if t == nil {
		return nil
	}
	appended, err := t.w.Hold()
	if err != nil {
		return fmt.Errorf("agentloop: %w", err)
	}
	if appended {
		// Announced, not added: the run that takes the lock has not
		// started its stream yet, and yields announcements first.
		text := fmt.Sprintf("session %s was written by another process while this one was idle; "+
			"this run continues this process's history, so the transcript branches here (resume the session again to see the other's turns)",
			t.w.SessionID())
		t.diag.Announce(func(id string) message.Message {
			return diag.Informational(id, diag.Diagnostic{Tag: DiagTranscript, Text: text})
		})
		t.diag.Log(DiagTranscript, text)
	}
	return nil
}

// release gives the lock up while the session is idle.
func (t *transcript) release() {
	if t == nil {
		return
	}
	if err := t.w.Release(); err != nil {
		t.diag.Add(DiagTranscript, err.Error())
	}
}
