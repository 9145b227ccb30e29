package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/internal/diag"
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
	// leaseTTL is how long a claim on a session in the store holds (tests
	// shorten it).
	leaseTTL = sessions.DefaultLeaseTTL
)

// transcript is the session's glue to its recorder (internal/transcript),
// which writes the conversation to its JSONL file, in the reference's
// layout, and mirrors it to Options.SessionStore.
//
// The recorder of a new session without a store is made by its first run
// (ready): an idle Client keeps only the transcript's path.
type transcript struct {
	r    *rec.Recorder    // set by ready; nil after close without one
	w    *sessions.Writer // the local file (owned by r); set with r
	path string           // the transcript's path
	diag *diagnostics
	once sync.Once                                // guards r and w: read them through ready
	mk   func() (*rec.Recorder, *sessions.Writer) // makes r and w at the first ready; nil when made already
}

// ready returns the recorder, making it if the transcript has none yet
// (nil after close).
func (t *transcript) ready() *rec.Recorder {
	t.once.Do(func() {
		if t.mk != nil {
			t.r, t.w = t.mk()
			t.mk = nil
		}
	})
	return t.r
}

// openTranscript resolves Resume/Continue/ForkSession into the session id
// and history to start from, and opens the transcript to append to. It runs
// before the engine exists; restore applies what it loaded.
//
// ctx (the Query's context) bounds restoring from Options.SessionStore,
// together with restoreTimeout.
//
// With a SessionStore, the session's store lease (sessions.AcquireLease) is
// taken first, before restoring or opening: a session another host is
// writing to the store fails with ErrSessionBusy, like one another process
// writes locally. A brand-new session takes it as well. A lease the store
// could not grant for another reason is a diagnostic, and the session runs
// without it.
func (s *Session) openTranscript(ctx context.Context) (_ *sessions.Transcript, err error) {
	o := s.opts
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
	var forkCost *sessions.CostState // the forked session's running totals
	if id != "" {
		if o.ForkSession {
			if err := s.checkForkPoint(dir, id); err != nil { // resume_at.go
				return nil, err
			}
			// The reference's --fork-session carries the original's
			// cost and usage totals into the fork, as a resume does
			// (testdata/conformance/t_fork); sessions.Fork copies only
			// the conversation.
			if p, err := sessions.Find(dir, id); err == nil {
				if src, err := sessions.Load(p); err == nil {
					forkCost = src.Cost
				}
			}
			forked, err := sessions.Fork(dir, id, "")
			if err != nil {
				if errors.Is(err, sessions.ErrNotFound) {
					return nil, fmt.Errorf("%w: %s", ErrSessionNotFound, id)
				}
				return nil, fmt.Errorf("agentloop: forking session %s: %w", id, err)
			}
			id = forked
		}
	}
	lease, err := s.takeLease(ctx, id)
	if err != nil {
		return nil, err
	}
	handed := false // the recorder owns the lease
	defer func() {
		if !handed && lease != nil {
			rctx, cancel := context.WithTimeout(context.Background(), mirrorCloseTimeout)
			defer cancel()
			if rerr := lease.Release(rctx); rerr != nil {
				s.diag.Add(DiagSessionStore, rerr.Error())
			}
		}
	}()
	if id != "" {
		path, err := sessions.Find(dir, id)
		if errors.Is(err, sessions.ErrNotFound) && o.SessionStore != nil {
			// Not on this host: bring it over from the shared store.
			key := sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: id}
			rctx, cancel := context.WithTimeout(ctx, restoreTimeout)
			var st sessions.StoreState
			path, st, err = sessions.RestoreChecked(rctx, o.SessionStore, key, dir)
			cancel()
			if err == nil && st.Behind() {
				s.diag.Add(DiagSessionStore, fmt.Sprintf(
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
		if tr.Cost == nil {
			tr.Cost = forkCost
		}
		s.env.SessionID = id
		if tr, err = s.cutAt(tr); err != nil { // resume_at.go
			return nil, err
		}
		s.diag.AddAll(DiagTranscript, tr.Warnings) // damaged lines read around
		s.env.SessionID = id
		s.diag.SetSessionID(id) // the diagnostics' messages carry the resumed id
		s.origin = "resume"
		if o.ForkSession {
			s.origin = "fork"
		}
	}
	s.announceTitle() // title.go
	if o.NoSessionPersistence {
		return tr, nil
	}
	env := sessions.Envelope{SessionID: s.env.SessionID, Cwd: s.env.Cwd, Version: "agentloop " + Version}
	var w *sessions.Writer
	if tr != nil {
		w, err = sessions.Open(tr.Path, env)
		if err == nil {
			// Held only while reading (and repairing) it: see
			// transcript.lock for when it is held again.
			defer func() {
				if rerr := w.Release(); rerr != nil {
					s.diag.Add(DiagTranscript, rerr.Error())
				}
			}()
			// Resume from what Open read holding the session's lock:
			// another process may have appended since Load.
			if lt := w.Transcript(); lt != nil && len(lt.Entries) > 0 {
				tr = lt
				if tr.Cost == nil {
					tr.Cost = forkCost
				}
				if tr, err = s.cutAt(tr); err != nil { // resume_at.go
					w.Close()
					return nil, err
				}
			}
			if tr.Leaf != "" {
				w.SetLeaf(tr.Leaf)
			}
		}
	} else {
		path := sessions.Path(dir, s.env.Cwd, s.env.SessionID)
		if err = checkNewTranscript(path, s.env.SessionID); err == nil && o.SessionStore == nil {
			// Nothing to restore or claim: the writer and its recorder
			// wait for the first run (transcript.ready).
			id := s.env.SessionID
			s.transcript = &transcript{path: path, diag: s.diag, mk: func() (*rec.Recorder, *sessions.Writer) {
				w := sessions.Prepare(path, s.envelope(id))
				return s.newRecorder(w), w
			}}
			return nil, nil
		}
		if err == nil {
			w = sessions.Prepare(path, env)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("agentloop: opening the transcript: %w", err)
	}
	s.writeTitle(w) // title.go
	cfg := rec.Config{Writer: w, Mode: s.modeName, CloseTimeout: mirrorCloseTimeout}
	if o.SessionStore != nil {
		cfg.Store = o.SessionStore
		cfg.Key = sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: s.env.SessionID}
		cfg.Lease = lease
		cfg.Notify = func(m message.Message) {
			// Logged as well: between two runs of a Client, or after the
			// last, the stream has no place for it.
			if sys, ok := m.(*message.System); ok && o.Logger != nil {
				o.Logger.LogAttrs(context.Background(), slog.LevelWarn, "session store copy failed",
					slog.String("tag", sys.Subtype), slog.String("session_id", s.env.SessionID),
					slog.String("error", string(sys.Data["error"])))
			}
			if e := s.engine(); e != nil {
				e.Notify(m)
			}
		}
	}
	r, err := rec.New(cfg)
	handed = true
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("agentloop: opening the transcript: %w", err)
	}
	s.transcript = &transcript{r: r, w: w, path: w.Path(), diag: s.diag}
	s.transcript.once.Do(func() {}) // ready already
	return tr, nil
}

// modeName is the current permission mode, for the transcript's user
// lines.
func (s *Session) modeName() string { return string(s.currentMode()) }

// newRecorder is the recorder, without a store, of a new session's
// transcript w, with the title entry queued (title.go).
func (s *Session) newRecorder(w *sessions.Writer) *rec.Recorder {
	s.writeTitle(w)
	r, err := rec.New(rec.Config{Writer: w, Mode: s.modeName, CloseTimeout: mirrorCloseTimeout})
	if err != nil { // only for a nil writer: the session then records nothing
		s.diag.Add(DiagTranscript, fmt.Sprintf("the session is not recorded: %v", err))
	}
	return r
}

// takeLease takes the store lease of the session to write: id when
// resuming (after a fork, the new id), else the new session's id. It
// returns nil without a store or when nothing will be written, and an
// error wrapping ErrSessionBusy when another host holds the session. It
// waits for the store at most mirrorCloseTimeout (and ctx): a store that
// does not answer by then costs the session its lease (a diagnostic), not
// its start; a claim that lands later is released.
func (s *Session) takeLease(ctx context.Context, id string) (*sessions.Lease, error) {
	o := s.opts
	if o.SessionStore == nil || o.NoSessionPersistence {
		return nil, nil
	}
	if id == "" {
		id = s.env.SessionID
	}
	key := sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: id}
	type acquired struct {
		l   *sessions.Lease
		err error
	}
	lctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	ch := make(chan acquired, 1)
	go func() {
		ttl := leaseTTL
		if o.SessionStoreLeaseTTL > 0 {
			ttl = o.SessionStoreLeaseTTL
		}
		l, err := sessions.AcquireLease(lctx, o.SessionStore, key, sessions.LeaseOptions{TTL: ttl})
		ch <- acquired{l, err}
	}()
	timer := time.NewTimer(mirrorCloseTimeout)
	defer timer.Stop()
	var (
		got acquired
		err error
	)
	select {
	case got = <-ch:
		err = got.err
	case <-timer.C:
		err = fmt.Errorf("the store did not answer within %v", mirrorCloseTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if got.l == nil && got.err == nil {
		// Given up on: release whatever the claim still takes.
		go func() {
			if late := <-ch; late.l != nil {
				rctx, stop := context.WithTimeout(context.Background(), mirrorCloseTimeout)
				defer stop()
				late.l.Release(rctx) // otherwise it lapses after its TTL
			}
		}()
	}
	switch {
	case errors.Is(err, sessions.ErrSessionBusy):
		return nil, fmt.Errorf("agentloop: %w", err)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("agentloop: taking the session store lease of %s: %w", id, ctx.Err())
	case err != nil:
		s.diag.Add(DiagSessionStore, fmt.Sprintf(
			"session %s runs without its session store lease (%v): another host resuming it at the same time is not excluded", id, err))
		return nil, nil
	}
	return got.l, nil
}

// record is the engine's recorder (engine.Config.Record): it writes each
// message that enters the history, and each result, to the transcript. A
// failed local write stops the recording and is reported once in the
// stream. It never waits for the store.
func (s *Session) record(m message.Message) {
	if s.transcript == nil {
		return
	}
	r := s.transcript.ready()
	notice := r.Record(m)
	// A prompt reaches the store before the model is asked (docs/serve.md:
	// a turn lost with its host keeps its prompt).
	for _, n := range r.AfterPrompt(context.Background()) {
		s.logMirrorError(n) // held back from cfg.Notify, so not logged yet
		if e := s.engine(); e != nil {
			e.Notify(n)
		}
	}
	if notice == nil {
		return
	}
	if l := r.WritesLost(); l != nil {
		s.diag.Log(DiagWritesLost, writesLostText(l), slog.String("error_code", l.ErrorCode))
	}
	if e := s.engine(); e != nil {
		e.Notify(notice)
	}
}

// writesLostText says, for the diagnostics log, what a failed transcript
// write cost.
func writesLostText(l *message.WritesLost) string {
	code := ""
	if l.ErrorCode != "" {
		code = " (" + l.ErrorCode + ")"
	}
	return fmt.Sprintf("session writes lost%s: the %s was not fully written, so a resume would get a truncated session: %s",
		code, strings.Join(l.Lost, ", "), l.Error)
}

// logMirrorError logs a store copy failure that Settle or AfterPrompt
// held back from the recorder's notices.
func (s *Session) logMirrorError(m message.Message) {
	if sys, ok := m.(*message.System); ok {
		s.diag.Log(sys.Subtype, "session store copy failed", slog.String("error", string(sys.Data["error"])))
	}
}

// settle runs before a result enters the stream: it waits (bounded) until
// the store has the run's entries and returns the mirror_error messages
// to show before the result, and marks the result when the transcript
// lost writes.
func (s *Session) settle(ctx context.Context, res *message.Result) []message.Message {
	if s.transcript == nil || res == nil {
		return nil
	}
	r := s.transcript.ready()
	out := r.Settle(ctx)
	for _, m := range out { // held back from cfg.Notify, so not logged yet
		s.logMirrorError(m)
	}
	if l := r.WritesLost(); l != nil && res.SessionWritesLost == nil {
		res.SessionWritesLost = l
	}
	return out
}

// begin marks the start of a prompt's run: it takes the transcript's
// lock (transcript.lock) and tells the recorder when the run began. It
// fails, wrapping ErrSessionBusy, while another process writes the
// session.
func (t *transcript) begin(now time.Time) error {
	if t == nil {
		return nil
	}
	if err := t.lock(); err != nil {
		return err
	}
	t.ready().Begin(now)
	return nil
}

// The lock policy of a session's transcript (see session.Writer's):
// NewSession creates no file and holds none (a resumed transcript is read
// under its lock, which is then released); a run takes the file and the
// lock at its start (transcript.lock) and lets them go at its end
// (transcript.release). An idle session holds no descriptor, and another
// process may resume it meanwhile; a write outside a run (a background
// task's) takes them for that write only.

// newTranscriptWriter is the Writer of a new session's transcript at
// path: nothing is created before the first run. A file already there
// (a SessionID used before) is refused now, as creating it would be.
func newTranscriptWriter(path string, env sessions.Envelope) (*sessions.Writer, error) {
	if err := checkNewTranscript(path, env.SessionID); err != nil {
		return nil, err
	}
	return sessions.Prepare(path, env), nil
}

// checkNewTranscript refuses a new session whose transcript exists.
func checkNewTranscript(path, id string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("session %s has a transcript already (%s): resume it instead", id, path)
	}
	return nil
}

// envelope is what the transcript of session id sets on its entries.
func (s *Session) envelope(id string) sessions.Envelope {
	return sessions.Envelope{SessionID: id, Cwd: s.env.Cwd, Version: "agentloop " + Version}
}

// lock takes the transcript's file and lock for a run (again: nothing
// to do). Without persistence it does nothing.
func (t *transcript) lock() error {
	if t == nil {
		return nil
	}
	if t.ready() == nil {
		return errors.New("agentloop: the transcript is closed")
	}
	if err := t.w.Lock(); err != nil {
		return fmt.Errorf("agentloop: opening the transcript: %w", err)
	}
	if t.w.Branched() {
		// Another process resumed the session while this one was idle
		// and wrote to it: this run goes on with this process's history.
		text := fmt.Sprintf("session %s was written by another process while this one was idle; "+
			"this run continues this process's history, so the transcript branches here (resume the session to see the other's turns)",
			t.w.SessionID())
		t.diag.Announce(func(id string) message.Message {
			return diag.Informational(id, diag.Diagnostic{Tag: DiagTranscript, Text: text})
		})
		t.diag.Log(DiagTranscript, text)
	}
	return nil
}

// release lets the transcript's file and lock go at the end of a run; a
// failure is a diagnostic.
func (t *transcript) release() {
	if t == nil || t.ready() == nil {
		return
	}
	if err := t.w.Release(); err != nil {
		t.diag.Add(DiagTranscript, err.Error())
	}
}

// close closes the transcript, waiting at most mirrorCloseTimeout for the
// store. A failure (store copies not made, a local close error) is a
// diagnostic: logged, and in the stream if a run is still going.
func (t *transcript) close() {
	if t == nil {
		return
	}
	t.once.Do(func() {}) // a transcript never made stays so: nothing was written
	if err := t.r.Close(); err != nil {
		t.diag.Add(DiagSessionStore, err.Error())
	}
}
