package serve

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/session"
)

// A Backend runs the turns of the sessions a Server hosts. The default,
// InProcess, runs them in the replica that opened the session: a turn that
// runs when the replica dies is lost (docs/serve.md). A durable backend
// (package temporal's ServeBackend) runs them elsewhere, so that they
// outlive the replica; the replica only relays their messages.
//
// Whichever the backend, a session is open on one replica at a time, the
// holder of its lease: that replica numbers and stores its events.
type Backend interface {
	// Open opens the session of req. The Conn is used by one replica until
	// its Close.
	Open(ctx context.Context, req OpenRequest) (Conn, error)
	// Durable says whether a session's turns go on without the replica
	// that opened it. A durable session that a replica closes while it
	// runs (drain, lease lost) is not interrupted, and a replica following
	// its events takes it over (and relays the rest) once its lease is
	// free.
	Durable() bool
}

// OpenRequest is what Backend.Open opens.
type OpenRequest struct {
	// ID is the session's id.
	ID string
	// Options are the session's complete options: the server's base, the
	// request's fields, its CanUseTool and hooks (the confinement of
	// confine.go among them), Cwd, ConfigDir and SessionStore. Resume is
	// ID.
	Options *agentloop.Options
	// After is the position (Delivery.Pos) of the last message the server
	// published for the session, 0 for none: a durable backend's stream
	// goes on after it.
	After int64
}

// A Delivery is one message of a session with its position in the
// backend's stream (0 when the backend does not number them).
type Delivery struct {
	Message agentloop.Message
	Pos     int64
}

// Conn is a session open on a replica. Its methods are called
// concurrently.
type Conn interface {
	// Messages streams the session's messages, those of every prompt,
	// until Close or ctx ends.
	Messages(ctx context.Context) iter.Seq2[Delivery, error]
	// Send queues a prompt and returns its message id. It does not wait
	// for the turn.
	Send(text string) (string, error)
	// Queued is the number of prompts sent and not started yet.
	Queued() int
	// Interrupt stops the running turn, if any.
	Interrupt(ctx context.Context) error
	// SetPermissionMode changes the mode of the session's next decisions.
	SetPermissionMode(ctx context.Context, mode agentloop.PermissionMode) error
	// Close lets the session go from this replica: an in-process session
	// closes (its history stays valid); a durable one goes on.
	Close() error
}

// Ender is a Backend that holds state of a session outside the store (a
// durable backend's workflow): End, called when the session is deleted,
// after its turn was interrupted, releases it. A session it does not know
// is not an error.
type Ender interface {
	End(ctx context.Context, id string) error
}

// Forker is a durable Backend that forks sessions itself (the session
// store does not hold their transcripts): Fork starts the session of req
// from the conversation session from has now. Forking happens only while
// from is idle. A durable backend that is not a Forker cannot fork.
type Forker interface {
	Fork(ctx context.Context, req OpenRequest, from string) error
}

// Checker is a Backend that runs only some sessions: Check says why one
// with opts cannot run (a 400 at creation), nil when it can.
type Checker interface {
	Check(opts *agentloop.Options) error
}

// InProcess is the default Backend: each session is an agentloop.Client
// in the replica that opened it.
type InProcess struct{}

// Durable is false: a turn ends with its replica.
func (InProcess) Durable() bool { return false }

// Open opens the session's client, resuming its transcript from the
// store, or starting it under its id when nothing was said in it yet.
func (InProcess) Open(ctx context.Context, req OpenRequest) (Conn, error) {
	opts := *req.Options
	opts.Resume = req.ID
	c, err := agentloop.NewClient(&opts)
	if errors.Is(err, agentloop.ErrSessionNotFound) {
		opts.Resume, opts.SessionID = "", req.ID
		c, err = agentloop.NewClient(&opts)
	}
	if err != nil {
		return nil, err
	}
	return clientConn{c}, nil
}

// clientConn is a Conn over an in-process client.
type clientConn struct{ c *agentloop.Client }

func (c clientConn) Messages(ctx context.Context) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) {
		for m, err := range c.c.Messages(ctx) {
			if !yield(Delivery{Message: m}, err) {
				return
			}
		}
	}
}

func (c clientConn) Send(text string) (string, error) {
	return c.c.Send(agentloop.UserInput{Text: text})
}

func (c clientConn) Queued() int { return len(c.c.Queued()) }

func (c clientConn) Interrupt(ctx context.Context) error {
	_, err := c.c.Interrupt(ctx, nil)
	return err
}

func (c clientConn) SetPermissionMode(_ context.Context, mode agentloop.PermissionMode) error {
	return c.c.SetPermissionMode(mode)
}

func (c clientConn) Close() error { return c.c.Close() }

// SessionOptions returns what a session working in cwd gets from this
// server rather than from its request: the base options, the provider,
// the settings sources, the confinement of its file tools to its tenant's
// root and configDir (confine.go), the logger and the observer. A durable
// backend's worker runs each session with them, under the request's
// fields the session carries. cwd must be an absolute directory inside a
// tenant's root of this server's Root.
func (s *Server) SessionOptions(cwd, configDir string) (*agentloop.Options, error) {
	clean := filepath.Clean(cwd)
	rel, err := filepath.Rel(s.root, clean)
	if err != nil || !filepath.IsAbs(cwd) || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("serve: session cwd %q is not inside a tenant's root under %s", cwd, s.root)
	}
	tenantRoot := filepath.Join(s.root, strings.Split(rel, string(filepath.Separator))[0])
	if !strings.HasPrefix(filepath.Base(tenantRoot), "t-") {
		return nil, fmt.Errorf("serve: session cwd %q is not inside a tenant's root under %s", cwd, s.root)
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return nil, fmt.Errorf("serve: session cwd: %w", err)
	}
	if real != clean {
		return nil, fmt.Errorf("serve: session cwd %q leads elsewhere (%s) through a symbolic link", cwd, real)
	}
	opts, err := s.options(nil, clean)
	if err != nil {
		return nil, err
	}
	opts.ConfigDir = configDir
	if opts.Sandbox, err = s.tenantSandbox(tenantRoot, configDir); err != nil {
		return nil, err
	}
	opts.Hooks = maps.Clone(opts.Hooks)
	if opts.Hooks == nil {
		opts.Hooks = map[hooks.Event][]hooks.Matcher{}
	}
	opts.Hooks[hooks.PreToolUse] = append(slices.Clone(opts.Hooks[hooks.PreToolUse]), confineHook(clean, tenantRoot, configDir))
	opts.Logger = s.log
	if s.cfg.Observer != nil {
		opts.Observer = s.cfg.Observer
	}
	return opts, nil
}

// followUp looks after a session a client follows from a replica that
// does not hold it, when its record says a turn runs: a durable session
// with no replica relaying it (its holder died or drained) is taken over
// here, so that the clients see the rest; an in-process session whose
// holder died (its lease is free) is marked interrupted. A session held
// elsewhere is left alone.
func (s *Server) followUp(ctx context.Context, rec *record, t Tenant) {
	if s.draining.Load() || s.getLive(rec.ID) != nil {
		return
	}
	cur, err := s.loadRecord(ctx, t.ID, rec.ID)
	if err != nil || (cur.State != stateRunning && cur.State != stateRequiresAction) {
		return
	}
	if !s.backend.Durable() {
		s.markInterrupted(ctx, cur)
		return
	}
	if _, err := s.activate(ctx, cur, t); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != http.StatusConflict {
			s.log.Warn("taking over a durable session", "session", rec.ID, "err", err)
		}
	}
}

// markInterrupted marks rec, which says a turn runs, interrupted when no
// replica holds its lease any more: the holder died with the turn. The
// state goes into the record and, as an event, into its log.
func (s *Server) markInterrupted(ctx context.Context, rec *record) {
	lease, err := session.AcquireLease(ctx, s.store, recordKey(rec.Tenant, rec.ID), session.LeaseOptions{TTL: s.cfg.LeaseTTL})
	if err != nil {
		return // held (alive), or the store failed: look again later
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = lease.Release(rctx)
	}()
	evs, err := s.loadEvents(ctx, rec.Tenant, rec.ID, 0)
	if err != nil {
		s.log.Warn("marking a session interrupted", "session", rec.ID, "err", err)
		return
	}
	var seq int64
	if n := len(evs); n > 0 {
		seq = evs[n-1].Seq
	}
	ev := event{Seq: seq + 1, Kind: kindState, Data: rawJSON(map[string]string{"state": stateInterrupted})}
	if err := s.appendEvent(ctx, rec.Tenant, rec.ID, ev); err != nil {
		s.log.Warn("marking a session interrupted", "session", rec.ID, "err", err)
		return
	}
	if err := s.writeRecord(ctx, rec.Tenant, rec.ID, record{State: stateInterrupted}); err != nil {
		s.log.Warn("marking a session interrupted", "session", rec.ID, "err", err)
		return
	}
	s.log.Info("session interrupted: its holder died mid-turn", "session", rec.ID, "holder", s.readHolder(ctx, rec.Tenant, rec.ID))
}
