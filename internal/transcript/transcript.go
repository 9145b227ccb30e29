// Package transcript records a session's stream messages into its JSONL
// transcript (a session.Writer) and, when a session.Store is configured,
// mirrors every entry to the store (a session.Mirror).
//
// The recording runs on the loop's goroutine, so it never waits for the
// store: store copies are made by the Mirror's own goroutine, their
// failures come back as system/mirror_error messages through
// Config.Notify. Settle, before each result, and Close bound their waits
// for the store by Config.CloseTimeout. The mirror records in the store
// whether its copy is complete (session.MirrorOptions.TrackState), and,
// given the session's store lease (Config.Lease), renews it on its own
// goroutine and releases it at Close.
package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// DefaultCloseTimeout bounds Close's wait for the store copies still in
// flight when Config.CloseTimeout is 0.
const DefaultCloseTimeout = 10 * time.Second

// Config is what a Recorder writes to and reports through.
type Config struct {
	// Writer is the local transcript. Required; the Recorder owns it and
	// closes it in Close.
	Writer *session.Writer
	// Store, when set, receives a copy of every entry under Key.
	Store session.Store
	Key   session.Key
	// Mode returns the current permission mode, written on user lines;
	// nil writes "default".
	Mode func() string
	// Notify receives a system/mirror_error message for each batch the
	// store did not take, except those Settle returns instead. It is
	// called from the mirror's goroutine (and from Close) and must be
	// safe for concurrent use; nil drops them.
	Notify func(message.Message)
	// CloseTimeout bounds the final flush to the store in Close; 0 means
	// DefaultCloseTimeout.
	CloseTimeout time.Duration
	// StoreTimeout bounds each store append; 0 means
	// session.DefaultMirrorTimeout.
	StoreTimeout time.Duration
	// Lease, with Store, is the writer's hold on the session in the store
	// (session.AcquireLease), taken by the caller before the session
	// starts writing. The Recorder owns it from New on, even when New
	// fails (it is then released): its mirror renews it and Close
	// releases it. Without Store it is released at once.
	Lease *session.Lease
	// Sidechain makes this the transcript of one subagent run
	// (<session>/subagents/agent-<id>.jsonl, its Writer's envelope
	// carrying the agent id and isSidechain): every message of the
	// subagent's history is written, although each names the Agent call
	// that started it (ParentToolUseID), and no last-prompt or
	// cost-state entry is, as the reference writes none there.
	Sidechain bool
}

// Recorder turns the messages entering a session's history into transcript
// entries. Its methods are safe for concurrent use; a nil *Recorder records
// nothing.
type Recorder struct {
	cfg       Config
	sessionID string

	mu     sync.Mutex
	w      *session.Writer
	m      *session.Mirror // nil without a store
	failed bool            // a local write failed: nothing more is written
	// summaryNext: a compact boundary was just written, and the next
	// user line is the compaction's summary (compact.go).
	summaryNext bool
	// promptWritten: the last Record wrote a prompt (AfterPrompt).
	promptWritten bool
	lost          *message.WritesLost
	closed        bool
	// holding collects mirror failures instead of notifying them while
	// Settle waits, so that Settle returns them for the stream.
	holding bool
	held    []message.Message
	stuck   bool      // a Settle timed out: Close does not wait again
	start   time.Time // when the current prompt began (for cost-state)
}

// New returns a Recorder writing to cfg.Writer (and mirroring to cfg.Store
// when set).
func New(cfg Config) (*Recorder, error) {
	if cfg.Writer == nil {
		return nil, errors.New("transcript: no writer")
	}
	if cfg.CloseTimeout <= 0 {
		cfg.CloseTimeout = DefaultCloseTimeout
	}
	r := &Recorder{cfg: cfg, sessionID: cfg.Writer.SessionID(), w: cfg.Writer}
	if cfg.Store != nil {
		if err := cfg.Key.Validate(); err != nil {
			r.dropLease()
			return nil, fmt.Errorf("transcript: store key: %w", err)
		}
		r.m = session.NewMirror(cfg.Writer, cfg.Store, cfg.Key, session.MirrorOptions{
			OnError: r.mirrorFailed, Timeout: cfg.StoreTimeout, TrackState: true, Lease: cfg.Lease})
	} else {
		r.dropLease()
	}
	return r, nil
}

// dropLease releases a lease no mirror will own.
func (r *Recorder) dropLease() {
	if r.cfg.Lease == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.CloseTimeout)
	defer cancel()
	_ = r.cfg.Lease.Release(ctx) // it lapses after its TTL otherwise
}

// mirrorFailed reports a batch the store did not take.
func (r *Recorder) mirrorFailed(e *session.MirrorError) {
	m := MirrorErrorMessage(r.sessionID, e)
	r.mu.Lock()
	if r.holding {
		r.held = append(r.held, m)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	if r.cfg.Notify != nil {
		r.cfg.Notify(m)
	}
}

// MirrorErrorMessage is the system/mirror_error message of e: its error
// text and the store key.
func MirrorErrorMessage(sessionID string, e *session.MirrorError) *message.System {
	key := map[string]string{"projectKey": e.Key.ProjectKey, "sessionId": e.Key.SessionID}
	if e.Key.Subpath != "" {
		key["subpath"] = e.Key.Subpath
	}
	return &message.System{Subtype: "mirror_error", SessionID: sessionID, UUID: uuid.NewString(),
		Data: fields(map[string]any{"error": e.Error(), "key": key})}
}

func fields(m map[string]any) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	return out
}

// Begin marks the start of a prompt's run: the result's cost-state entry
// counts from now.
func (r *Recorder) Begin(now time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start = now
}

// Record appends the entries of one message entering the history:
// assistant blocks, user lines (a prompt also gets its last-prompt entry)
// and a result's cost-state; other messages and those of subagents are not
// written here (a subagent's go to its own Recorder: Config.Sidechain).
// Only the local write happens on the caller's goroutine; the store copy
// is queued. It returns the system/session_writes_lost
// notice to show when the local write failed; after a failure (or Close)
// nothing more is written.
func (r *Recorder) Record(m message.Message) message.Message {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed || r.closed {
		return nil
	}
	mode := "default"
	if r.cfg.Mode != nil {
		mode = r.cfg.Mode()
	}
	var err error
	switch m := m.(type) {
	case *message.Assistant:
		if m.ParentToolUseID == nil || r.cfg.Sidechain {
			err = r.recordAssistant(m)
		}
	case *message.System:
		if m.Subtype == message.SubtypeCompactBoundary {
			err = r.recordBoundary(m)
			r.summaryNext = err == nil
		}
	case *message.User:
		if m.ParentToolUseID == nil || r.cfg.Sidechain {
			err = r.recordUser(m, mode)
		}
	case *message.Result:
		if !r.cfg.Sidechain {
			err = r.recordResult(m)
		}
	}
	if err != nil {
		r.failed = true
		r.lost = &message.WritesLost{ErrorCode: errorCode(err), Lost: []string{"transcript"},
			TranscriptSessionIDs: []string{r.sessionID}, Error: err.Error()}
		return WritesLostMessage(r.sessionID, r.lost)
	}
	return nil
}

// recordAssistant, recordBoundary, recordUser and recordResult write the
// lines of one message for Record (r.mu held). Each is a function of its
// own (not inlined), holding its own entries: the lines are written deep in
// a turn's stack, where a frame holding every kind of entry at once would
// add to the stack every session's goroutine grows to.
//
//go:noinline
func (r *Recorder) recordAssistant(m *message.Assistant) error {
	return r.append(assistantEntry(m)...)
}

// assistantEntry is m's line, as a slice made here (on the heap) so that
// recordAssistant's frame holds no Entry.
//
//go:noinline
func assistantEntry(m *message.Assistant) []session.Entry {
	return []session.Entry{session.AssistantEntry(m)}
}

//go:noinline
func (r *Recorder) recordBoundary(m *message.System) error {
	return r.append(compactBoundary(m, r.w.Leaf()))
}

//go:noinline
func (r *Recorder) recordUser(m *message.User, mode string) error {
	e := userEntry(m, mode)
	e[0].IsCompactSummary, r.summaryNext = r.summaryNext, false
	if err := r.append(e...); err != nil {
		return err
	}
	if text, ok := promptText(m); ok && !r.cfg.Sidechain {
		return r.recordLastPrompt(text)
	}
	return nil
}

// recordLastPrompt writes the last-prompt line of a prompt's text.
//
//go:noinline
func (r *Recorder) recordLastPrompt(text string) error {
	err := r.append(session.LastPromptEntry(BoundPrompt(text), r.w.Leaf()))
	r.promptWritten = err == nil
	return err
}

// userEntry is assistantEntry for a user line.
//
//go:noinline
func userEntry(m *message.User, mode string) []session.Entry {
	return []session.Entry{session.UserEntry(m, mode)}
}

//go:noinline
func (r *Recorder) recordResult(m *message.Result) error {
	return r.append(costEntry(m, r.start)...)
}

// costEntry is assistantEntry for the cost line of a result.
//
//go:noinline
func costEntry(m *message.Result, start time.Time) []session.Entry {
	return []session.Entry{session.CostStateEntry(session.CostFromResult(m, start))}
}

// WritesLostMessage is the system/session_writes_lost message of l.
func WritesLostMessage(sessionID string, l *message.WritesLost) *message.System {
	f := map[string]any{"error": l.Error, "lost": l.Lost, "transcript_session_ids": l.TranscriptSessionIDs}
	if l.ErrorCode != "" {
		f["error_code"] = l.ErrorCode
	}
	return &message.System{Subtype: "session_writes_lost", SessionID: sessionID, UUID: uuid.NewString(), Data: fields(f)}
}

// WritesLost returns what the transcript lost, or nil when every write
// succeeded. A copy is returned.
func (r *Recorder) WritesLost() *message.WritesLost {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost == nil {
		return nil
	}
	l := *r.lost
	l.Lost = append([]string(nil), l.Lost...)
	l.TranscriptSessionIDs = append([]string(nil), l.TranscriptSessionIDs...)
	return &l
}

// errorCode names a full disk or an exceeded quota, the codes the
// reference reports.
func errorCode(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "ENOSPC"
	case errors.Is(err, syscall.EDQUOT):
		return "EDQUOT"
	}
	return ""
}

// append writes entries locally, and queues them for the store when there
// is one.
func (r *Recorder) append(e ...session.Entry) error {
	if err := fault(); err != nil {
		return fmt.Errorf("session: %s: %w", r.w.Path(), err)
	}
	if r.m != nil {
		return r.m.Append(e...)
	}
	return r.w.Append(e...)
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

// Close waits up to CloseTimeout for the store copies still in flight,
// then closes the transcript. It returns within the bound (plus the local
// close) even when the store never answers; the copies not made by then
// are reported through Notify and the error wraps
// context.DeadlineExceeded. Calls after the first return nil.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	// The lock is not held while waiting: nothing more is recorded.
	if r.m == nil {
		return r.w.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.closeWait())
	defer cancel()
	if err := r.m.Close(ctx); err != nil {
		return fmt.Errorf("transcript: closing session %s: %w", r.sessionID, err)
	}
	return nil
}

// Note appends entries that are not messages of the history (a
// custom-title entry, say), locally and to the store. After a failed
// write or Close it writes nothing and returns nil: the failure was
// reported when it happened.
func (r *Recorder) Note(e ...session.Entry) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed || r.closed {
		return nil
	}
	return r.append(e...)
}
