package conversation

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentloop/agentloop/hooks"
	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// "/clear" (and its aliases "/reset" and "/new") ends the conversation and
// starts a new one in the same session, as the reference does: a new
// session id, announced by a conversation_reset message; every message
// after it carries the new id, and Client.SessionID returns it. The
// engine has already emptied the history and restarted the totals when
// cleared runs.
//
// The old conversation ends as a session does: SessionEnd (reason clear)
// with the old id, and its transcript is closed, so that resuming the old
// id gives the conversation before the /clear. The new conversation gets
// its own transcript file (and store key, with its own lease), and
// SessionStart (source clear) runs with the new id once the reset is in
// the stream; what it adds for the model goes with the next prompt.

// cleared is the engine's Cleared: it ends the old conversation, switches
// the session to a new id and transcript, and returns the
// conversation_reset message.
func (s *Session) cleared(ctx context.Context) message.Message {
	old := s.env.SessionID
	s.hooks.SessionEnd(ctx, hooks.SessionEndInput{Base: s.hookBase(), Reason: "clear"})
	id := uuid.NewString()
	s.idMu.Lock()
	s.env.SessionID = id
	s.idMu.Unlock()
	s.diag.SetSessionID(id)
	s.switchTranscript(ctx, id)
	return &message.ConversationReset{NewConversationID: id, Trigger: message.ResetTriggerClear,
		SessionID: old, UUID: uuid.NewString(), Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}
}

// ID is the session's current id; it may be called while a query
// runs (a /clear changes it).
func (s *Session) ID() string {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	return s.env.SessionID
}

// afterClear is the engine's AfterClear: SessionStart (source clear) for
// the new conversation. Its context waits for the next prompt.
func (s *Session) afterClear(ctx context.Context) {
	st := s.noteSessionStart("clear", s.hooks.SessionStart(ctx, hooks.SessionStartInput{Base: s.hookBase(), Source: "clear", Model: s.engine().Model()}))
	s.started = true
	s.clearContext = append(s.clearContext, st.AdditionalContext...)
}

// switchTranscript closes the transcript of the conversation that ended
// and opens a new one for the session id id. Without persistence it does
// nothing. When the new transcript cannot be opened, the new conversation
// is not recorded, and a diagnostic says so.
func (s *Session) switchTranscript(ctx context.Context, id string) {
	old := s.transcript
	if old == nil {
		return
	}
	old.close()
	s.transcript = nil
	t, err := s.newTranscript(ctx, id)
	if err != nil {
		s.diag.Add(DiagTranscript, fmt.Sprintf("the conversation started by /clear (session %s) is not recorded: %v", id, err))
		return
	}
	if err := t.begin(time.Now()); err != nil {
		s.diag.Add(DiagTranscript, fmt.Sprintf("the conversation started by /clear (session %s) is not recorded: %v", id, err))
		t.close()
		return
	}
	s.transcript = t
}

// newTranscript opens the transcript of a new conversation id, with its
// store mirror and lease when there is a SessionStore.
func (s *Session) newTranscript(ctx context.Context, id string) (*transcript, error) {
	o := s.opts
	lease, err := s.takeLease(ctx, id)
	if err != nil {
		return nil, err
	}
	release := func() {
		if lease == nil {
			return
		}
		rctx, cancel := context.WithTimeout(context.Background(), mirrorCloseTimeout)
		defer cancel()
		if rerr := lease.Release(rctx); rerr != nil {
			s.diag.Add(DiagSessionStore, rerr.Error())
		}
	}
	env := sessions.Envelope{SessionID: id, Cwd: s.env.Cwd, Version: "agentloop " + Version}
	w, err := newTranscriptWriter(sessions.Path(s.configDir, s.env.Cwd, id), env) // persist.go
	if err != nil {
		release()
		return nil, fmt.Errorf("opening the transcript: %w", err)
	}
	cfg := rec.Config{Writer: w, Mode: func() string { return string(s.currentMode()) }, CloseTimeout: mirrorCloseTimeout}
	if o.SessionStore != nil {
		cfg.Store = o.SessionStore
		cfg.Key = sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: id}
		cfg.Lease = lease
		cfg.Notify = func(m message.Message) {
			if sys, ok := m.(*message.System); ok && o.Logger != nil {
				o.Logger.LogAttrs(context.Background(), slog.LevelWarn, "session store copy failed",
					slog.String("tag", sys.Subtype), slog.String("session_id", id),
					slog.String("error", string(sys.Data["error"])))
			}
			if e := s.engine(); e != nil {
				e.Notify(m)
			}
		}
	}
	r, err := rec.New(cfg)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("opening the transcript: %w", err)
	}
	t := &transcript{r: r, w: w, path: w.Path(), diag: s.diag}
	t.once.Do(func() {}) // ready already
	return t, nil
}
