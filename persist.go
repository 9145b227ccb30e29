package agentloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// ErrSessionNotFound reports a session to resume that does not exist.
var ErrSessionNotFound = errors.New("agentloop: session not found")

// transcript writes a session's conversation to its JSONL file, in the
// reference's layout, so it can be resumed, continued or forked later, by
// agentloop or by the reference.
type transcript struct {
	mu     sync.Mutex
	w      *sessions.Writer
	m      *sessions.Mirror // set when a SessionStore mirrors the transcript
	failed bool
	start  time.Time // when the current prompt began (for cost-state)
}

// append writes entries locally, and to the store when there is one.
func (t *transcript) append(e ...sessions.Entry) error {
	if t.m != nil {
		return t.m.Append(e...)
	}
	return t.w.Append(e...)
}

// openTranscript resolves Resume/Continue/ForkSession into the session id
// and history to start from, and opens the transcript to append to. It runs
// before the engine exists; restore applies what it loaded.
func (s *session) openTranscript() (*sessions.Transcript, error) {
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
			path, err = sessions.Restore(context.Background(), o.SessionStore, key, dir)
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
		s.env.SessionID = id
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
		if err == nil && tr.Leaf != "" {
			w.SetLeaf(tr.Leaf)
		}
	} else {
		w, err = sessions.Create(sessions.Path(dir, s.env.Cwd, s.env.SessionID), env)
	}
	if err != nil {
		return nil, fmt.Errorf("agentloop: opening the transcript: %w", err)
	}
	s.transcript = &transcript{w: w}
	if o.SessionStore != nil {
		key := sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: s.env.SessionID}
		s.transcript.m = sessions.NewMirror(w, o.SessionStore, key, sessions.MirrorOptions{
			OnError: func(e *sessions.MirrorError) {
				if s.eng != nil {
					s.eng.Notify(&message.System{Subtype: "mirror_error", SessionID: s.env.SessionID, UUID: uuid.NewString(),
						Data: rawFields(map[string]any{"error": e.Error(), "key": map[string]string{
							"projectKey": e.Key.ProjectKey, "sessionId": e.Key.SessionID}})})
				}
			},
		})
	}
	return tr, nil
}

// record is the engine's recorder (engine.Config.Record): it writes each
// message that enters the history, and each result, to the transcript. A
// failed write stops the recording and is reported once in the stream.
func (s *session) record(m message.Message) {
	if notice := s.transcript.record(s, m); notice != nil && s.eng != nil {
		s.eng.Notify(notice)
	}
}

// begin marks the start of a prompt's run.
func (t *transcript) begin(now time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = now
}

// record appends the entries of one recorded message: assistant blocks,
// user lines (a prompt also gets its last-prompt entry), and a result's
// cost-state. It returns the notice to show when a write failed; after a
// failure nothing more is written.
func (t *transcript) record(s *session, m message.Message) message.Message {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed {
		return nil
	}
	mode := string(s.currentMode())
	var err error
	switch m := m.(type) {
	case *message.Assistant:
		if m.ParentToolUseID == nil {
			err = t.append(sessions.AssistantEntry(m))
		}
	case *message.User:
		if m.ParentToolUseID == nil {
			err = t.append(sessions.UserEntry(m, mode))
			if text, ok := promptText(m); ok && err == nil {
				err = t.append(sessions.LastPromptEntry(text, t.w.Leaf()))
			}
		}
	case *message.Result:
		err = t.append(sessions.CostStateEntry(sessions.CostFromResult(m, t.start)))
		if err == nil && t.m != nil {
			// The result is where a host may move on: the store has
			// everything up to it.
			_ = t.m.Flush(context.Background())
		}
	}
	if err != nil {
		t.failed = true
		return &message.System{Subtype: "session_writes_lost", SessionID: s.env.SessionID, UUID: uuid.NewString(),
			Data: rawFields(map[string]any{"error": err.Error(), "lost": []string{"transcript"}})}
	}
	return nil
}

// promptText returns the text of a prompt line: a user line the loop did
// not write itself, holding no tool results.
func promptText(u *message.User) (string, bool) {
	if u.IsSynthetic {
		return "", false
	}
	var parts []string
	for _, c := range u.Message.Content {
		switch c.Type {
		case model.TypeToolResult:
			return "", false
		case model.TypeText:
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n"), true
}

func (t *transcript) close() {
	if t == nil {
		return
	}
	if t.m != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sessions.DefaultMirrorTimeout)
		defer cancel()
		_ = t.m.Close(ctx)
		return
	}
	_ = t.w.Close()
}
