package agentloop

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentloop/agentloop/message"
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
	failed bool
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
	return tr, nil
}

// record appends the entries of one stream message. A failed write stops
// the recording and is reported once in the stream; the run goes on.
func (t *transcript) record(s *session, m message.Message, start time.Time) message.Message {
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
			err = t.w.Append(sessions.AssistantEntry(m))
		}
	case *message.User:
		if m.ParentToolUseID == nil {
			err = t.w.Append(sessions.UserEntry(m, mode))
		}
	case *message.Result:
		err = t.w.Append(sessions.CostStateEntry(sessions.CostFromResult(m, start)))
	}
	if err != nil {
		t.failed = true
		return &message.System{Subtype: "session_writes_lost", SessionID: s.env.SessionID, UUID: uuid.NewString(),
			Data: rawFields(map[string]any{"error": err.Error(), "lost": []string{"transcript"}})}
	}
	return nil
}

// prompt appends a prompt entry.
func (t *transcript) prompt(text, mode string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.failed {
		err := t.w.Append(sessions.PromptEntry("", text, mode))
		if err == nil {
			err = t.w.Append(sessions.LastPromptEntry(text, t.w.Leaf()))
		}
		t.failed = err != nil
	}
}

func (t *transcript) close() {
	if t != nil {
		_ = t.w.Close()
	}
}
