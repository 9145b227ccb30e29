package agentloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
)

// ErrSessionNotFound reports a session to resume that does not exist.
var ErrSessionNotFound = errors.New("agentloop: session not found")

// restoreTimeout bounds restoring a session from Options.SessionStore (on
// top of the Query's context); mirrorCloseTimeout bounds the final flush
// to the store when the session closes (tests shorten it).
var (
	restoreTimeout     = sessions.DefaultRestoreTimeout
	mirrorCloseTimeout = rec.DefaultCloseTimeout
)

// transcript is the session's glue to its recorder (internal/transcript),
// which writes the conversation to its JSONL file, in the reference's
// layout, and mirrors it to Options.SessionStore.
type transcript struct {
	r    *rec.Recorder
	w    *sessions.Writer // the local file (owned by r; read only for its path)
	diag *diagnostics
}

// openTranscript resolves Resume/Continue/ForkSession into the session id
// and history to start from, and opens the transcript to append to. It runs
// before the engine exists; restore applies what it loaded.
//
// ctx (the Query's context) bounds restoring from Options.SessionStore,
// together with restoreTimeout.
func (s *session) openTranscript(ctx context.Context) (*sessions.Transcript, error) {
	o := &s.opts
	dir := o.ConfigDir
	if dir == "" {
		dir = sessions.DefaultConfigDir()
	}
	s.configDir = dir
	id := o.Resume
	if o.Continue && id == "" {
		info, err := sessions.Latest(dir, s.env.Cwd)
		if err == nil {
			id = info.SessionID
		} else if !errors.Is(err, sessions.ErrNotFound) {
			return nil, fmt.Errorf("agentloop: finding the session to continue: %w", err)
		}
	}
	var tr *sessions.Transcript
	if id != "" {
		if o.ForkSession {
			forked, err := sessions.Fork(dir, id, "")
			if err != nil {
				if errors.Is(err, sessions.ErrNotFound) {
					return nil, fmt.Errorf("%w: %s", ErrSessionNotFound, id)
				}
				return nil, fmt.Errorf("agentloop: forking session %s: %w", id, err)
			}
			id = forked
		}
		path, err := sessions.Find(dir, id)
		if errors.Is(err, sessions.ErrNotFound) && o.SessionStore != nil {
			// Not on this host: bring it over from the shared store.
			key := sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: id}
			rctx, cancel := context.WithTimeout(ctx, restoreTimeout)
			var st sessions.StoreState
			path, st, err = sessions.RestoreChecked(rctx, o.SessionStore, key, dir)
			cancel()
			if err == nil && st.Behind() {
				s.diag.add(DiagSessionStore, fmt.Sprintf(
					"session %s was restored from the session store, whose copy is known to be behind the host that wrote it: %s; the resumed history may be truncated", id, st))
			}
		}
		if err != nil {
			if errors.Is(err, sessions.ErrNotFound) {
				return nil, fmt.Errorf("%w: %s", ErrSessionNotFound, id)
			}
			return nil, fmt.Errorf("agentloop: finding session %s: %w", id, err)
		}
		if tr, err = sessions.Load(path); err != nil {
			return nil, fmt.Errorf("agentloop: reading session %s: %w", id, err)
		}
		s.diag.addAll(DiagTranscript, tr.Warnings) // damaged lines read around
		s.env.SessionID = id
		s.origin = "resume"
		if o.ForkSession {
			s.origin = "fork"
		}
	}
	if o.NoSessionPersistence {
		return tr, nil
	}
	env := sessions.Envelope{SessionID: s.env.SessionID, Cwd: s.env.Cwd, Version: "agentloop " + Version}
	var (
		w   *sessions.Writer
		err error
	)
	if tr != nil {
		w, err = sessions.Open(tr.Path, env)
		if err == nil {
			// Resume from what Open read holding the session's lock:
			// another process may have appended since Load.
			if lt := w.Transcript(); lt != nil && len(lt.Entries) > 0 {
				tr = lt
			}
			if tr.Leaf != "" {
				w.SetLeaf(tr.Leaf)
			}
		}
	} else {
		w, err = sessions.Create(sessions.Path(dir, s.env.Cwd, s.env.SessionID), env)
	}
	if err != nil {
		return nil, fmt.Errorf("agentloop: opening the transcript: %w", err)
	}
	cfg := rec.Config{Writer: w, Mode: func() string { return string(s.currentMode()) },
		CloseTimeout: mirrorCloseTimeout}
	if o.SessionStore != nil {
		cfg.Store = o.SessionStore
		cfg.Key = sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: s.env.SessionID}
		cfg.Notify = func(m message.Message) {
			// Logged as well: between two runs of a Client, or after the
			// last, the stream has no place for it.
			if sys, ok := m.(*message.System); ok && o.Logger != nil {
				o.Logger.LogAttrs(context.Background(), slog.LevelWarn, "session store copy failed",
					slog.String("tag", sys.Subtype), slog.String("session_id", s.env.SessionID),
					slog.String("error", string(sys.Data["error"])))
			}
			if s.eng != nil {
				s.eng.Notify(m)
			}
		}
	}
	r, err := rec.New(cfg)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("agentloop: opening the transcript: %w", err)
	}
	s.transcript = &transcript{r: r, w: w, diag: s.diag}
	return tr, nil
}

// record is the engine's recorder (engine.Config.Record): it writes each
// message that enters the history, and each result, to the transcript. A
// failed local write stops the recording and is reported once in the
// stream. It never waits for the store.
func (s *session) record(m message.Message) {
	if s.transcript == nil {
		return
	}
	if notice := s.transcript.r.Record(m); notice != nil && s.eng != nil {
		s.eng.Notify(notice)
	}
}

// settle runs before a result enters the stream: it waits (bounded) until
// the store has the run's entries and returns the mirror_error messages
// to show before the result, and marks the result when the transcript
// lost writes.
func (s *session) settle(ctx context.Context, res *message.Result) []message.Message {
	if s.transcript == nil || res == nil {
		return nil
	}
	out := s.transcript.r.Settle(ctx)
	if l := s.transcript.r.WritesLost(); l != nil && res.SessionWritesLost == nil {
		res.SessionWritesLost = l
	}
	return out
}

// begin marks the start of a prompt's run.
func (t *transcript) begin(now time.Time) {
	if t != nil {
		t.r.Begin(now)
	}
}

// close closes the transcript, waiting at most mirrorCloseTimeout for the
// store. A failure (store copies not made, a local close error) is a
// diagnostic: logged, and in the stream if a run is still going.
func (t *transcript) close() {
	if t == nil {
		return
	}
	if err := t.r.Close(); err != nil {
		t.diag.add(DiagSessionStore, err.Error())
	}
}
