// Package diag is the diagnostics channel of a session: whatever
// agentloop accepts but does not honour, and whatever it works around at
// run time, becomes a Diagnostic, logged at warning level and yielded in
// the session's stream as a system/informational message (see the root
// package's Diagnostic for the tags).
package diag

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/agentloop/agentloop/message"
	"github.com/google/uuid"
)

// Diagnostic is one thing agentloop accepted but does not honour, or a
// problem it worked around.
type Diagnostic struct {
	// Tag classifies it (the root package's Diag* constants).
	Tag string
	// Text says what was wrong and where, for a person.
	Text string
}

// New returns a sink that logs to logger (nil: nowhere) and stamps its
// messages with sessionID.
func New(logger *slog.Logger, sessionID string) *Sink {
	return &Sink{logger: logger, sessionID: sessionID}
}

// SetSessionID changes the session id the messages carry (/clear, a
// resumed session).
func (g *Sink) SetSessionID(id string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.sessionID = id
	g.mu.Unlock()
}

// Sink collects a session's diagnostics. Safe for concurrent use; a nil
// *Sink records nothing.
type Sink struct {
	logger    *slog.Logger // nil: none
	sessionID string
	notify    func(message.Message) // set once the engine exists: runtime diagnostics go through it

	mu      sync.Mutex
	lead    []func(sessionID string) message.Message // yielded by the next take, before the diagnostics
	pending []Diagnostic                             // found before the first init message, not yet yielded
	all     []Diagnostic
}

// Add records d: it is logged now and yielded later.
func (g *Sink) Add(tag, text string) {
	if g == nil || text == "" {
		return
	}
	d := Diagnostic{Tag: tag, Text: text}
	g.mu.Lock()
	id := g.sessionID // /clear changes it (clear_session.go)
	g.all = append(g.all, d)
	notify := g.notify
	if notify == nil {
		g.pending = append(g.pending, d)
	}
	g.mu.Unlock()
	if g.logger != nil {
		g.logger.LogAttrs(context.Background(), slog.LevelWarn, text,
			slog.String("tag", tag), slog.String("session_id", id))
	}
	if notify != nil {
		notify(Informational(id, d))
	}
}

// Log writes a record to the diagnostics log only: for a problem the
// stream reports in a message of its own (a sandbox notification, a
// session_writes_lost message), which is not yielded again as a
// diagnostic.
func (g *Sink) Log(tag, text string, attrs ...slog.Attr) {
	if g == nil || g.logger == nil || text == "" {
		return
	}
	g.mu.Lock()
	id := g.sessionID
	g.mu.Unlock()
	attrs = append([]slog.Attr{slog.String("tag", tag), slog.String("session_id", id)}, attrs...)
	g.logger.LogAttrs(context.Background(), slog.LevelWarn, text, attrs...)
}

// AddAll records each text under tag.
func (g *Sink) AddAll(tag string, texts []string) {
	for _, t := range texts {
		g.Add(tag, t)
	}
}

// Announce queues a message for the next take, which yields it (once)
// before the diagnostics; build makes it with the session id current
// then.
func (g *Sink) Announce(build func(sessionID string) message.Message) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lead = append(g.lead, build)
}

// Take returns the announced messages and the diagnostics not yet
// yielded, as messages, and routes later diagnostics through notify (nil:
// keep queueing them).
func (g *Sink) Take(notify func(message.Message)) []message.Message {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []message.Message
	for _, build := range g.lead {
		out = append(out, build(g.sessionID))
	}
	g.lead = nil
	for _, d := range g.pending {
		out = append(out, Informational(g.sessionID, d))
	}
	g.pending = nil
	if notify != nil {
		g.notify = notify
	}
	return out
}

// List returns every diagnostic recorded so far.
func (g *Sink) List() []Diagnostic {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Diagnostic(nil), g.all...)
}

// Informational is the system/informational message of d.
func Informational(sessionID string, d Diagnostic) *message.System {
	content, _ := json.Marshal(d.Text)
	tag, _ := json.Marshal(d.Tag)
	return &message.System{Subtype: "informational", SessionID: sessionID, UUID: uuid.NewString(),
		Data: map[string]json.RawMessage{"content": content, "level": json.RawMessage(`"warning"`), "tag": tag}}
}

// Of returns the diagnostic a stream message carries: a
// system/informational message at warning level. ok is false for every
// other message.
func Of(m message.Message) (d Diagnostic, ok bool) {
	s, isSys := m.(*message.System)
	if !isSys || s.Subtype != "informational" || string(s.Data["level"]) != `"warning"` {
		return Diagnostic{}, false
	}
	_ = json.Unmarshal(s.Data["content"], &d.Text)
	_ = json.Unmarshal(s.Data["tag"], &d.Tag)
	return d, true
}
