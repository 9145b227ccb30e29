package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/agentloop/agentloop/internal/conversation"
	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/session"
)

// Durable transcripts. When the worker's Options name a SessionStore, the
// messages that enter a session's history (and each result) are written
// to it as the in-process loop writes them, so that the session can be
// listed, resumed in-process, or forked from the store: the workflow
// collects them during a run (the loop's recorder) and hands them to the
// Persist activity once the run is over. The worker that runs Persist
// writes them through a transcript of its own, restored from the store
// when it did not write the session before; entries carry their
// messages' ids, so an activity run again adds nothing twice.

// PersistCall is the input of the Persist activity.
type PersistCall struct {
	Session SessionInput      `json:"session"`
	Lines   []json.RawMessage `json:"lines"`
}

// persist hands the messages the run recorded to the Persist activity.
// A failure is reported in the stream; the run's result stands.
func (w *wf) persist() {
	if len(w.recorded) == 0 {
		return
	}
	lines := w.recorded
	w.recorded = nil
	ctx := workflow.WithActivityOptions(w.root, hookOptions)
	if err := workflow.ExecuteActivity(ctx, actPersist, PersistCall{Session: w.session(), Lines: lines}).Get(ctx, nil); err != nil {
		w.notice("The session's transcript was not written to the session store: " + err.Error())
	}
}

// recorderIf is the loop's recorder when the worker writes transcripts.
func (w *wf) recorderIf(on bool) func(message.Message) {
	if !on {
		return nil
	}
	return w.record
}

// record is the loop's recorder on the durable path.
func (w *wf) record(m message.Message) {
	b, err := json.Marshal(m)
	if err != nil {
		w.notice("a message could not be recorded: " + err.Error())
		return
	}
	w.recorded = append(w.recorded, b)
}

// Persist writes a run's messages to the session's transcript in the
// worker's SessionStore.
func (a *Activities) Persist(ctx context.Context, call PersistCall) error {
	s, err := a.session(ctx, call.Session)
	if err != nil {
		return err
	}
	r, err := a.recorder(ctx, s, call.Session)
	if err != nil {
		return err
	}
	for i, line := range call.Lines {
		m, err := message.Decode(line)
		if err != nil {
			return fmt.Errorf("agentloop/temporal: message %d of the run: %w", i, err)
		}
		if notice := r.Record(m); notice != nil {
			return fmt.Errorf("agentloop/temporal: writing the transcript: %s", notice.(*message.System).Data["error"])
		}
	}
	for _, m := range r.Settle(ctx) {
		if sys, ok := m.(*message.System); ok {
			return fmt.Errorf("agentloop/temporal: the session store did not take the transcript: %s", sys.Data["error"])
		}
	}
	return nil
}

// recorder is the workflow's transcript on this worker, opened on first
// use: from the store's copy when the session has one.
func (a *Activities) recorder(ctx context.Context, s *conversation.Session, in SessionInput) (*rec.Recorder, error) {
	id := activity.GetInfo(ctx).WorkflowExecution.ID
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.recorders[id]; r != nil {
		return r, nil
	}
	store := a.base.SessionStore
	cwd := s.EngineConfig().Env.Cwd
	dir := a.base.ConfigDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "agentloop-temporal")
	}
	key := session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: in.SessionID}
	path := session.Path(dir, cwd, in.SessionID)
	env := session.Envelope{SessionID: in.SessionID, Cwd: cwd, Version: "agentloop (temporal)"}
	// Always from the store: another worker may have written since this
	// one last held the session.
	_ = os.Remove(path)
	restored, _, err := session.RestoreChecked(ctx, store, key, dir)
	var w *session.Writer
	switch {
	case errors.Is(err, session.ErrNotFound):
		w, err = session.Create(path, env)
	case err != nil:
		return nil, fmt.Errorf("agentloop/temporal: restoring the transcript from the session store: %w", err)
	default:
		w, err = session.Open(restored, env)
	}
	if err != nil {
		return nil, fmt.Errorf("agentloop/temporal: opening the transcript: %w", err)
	}
	r, err := rec.New(rec.Config{Writer: w, Store: store, Key: key, Mode: func() string { return string(s.PermissionMode()) }})
	if err != nil {
		return nil, fmt.Errorf("agentloop/temporal: %w", err)
	}
	a.recorders[id] = r
	return r, nil
}
