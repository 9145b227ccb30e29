package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/session"
)

// handleEvents streams a session's events as Server-Sent Events: first
// those after Last-Event-ID (or ?after=), then new ones as they come.
// On the replica holding the session they come from memory; elsewhere
// they are read from the store every PollInterval.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, t Tenant) {
	ctx := r.Context()
	id := r.PathValue("id")
	rec, err := s.loadRecord(ctx, t.ID, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if after, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || after < 0 {
			s.fail(w, badRequest("Last-Event-ID %q is not an event id", v))
			return
		}
	} else if v := r.URL.Query().Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			s.fail(w, badRequest("after=%q is not an event id", v))
			return
		}
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	s.subs.Add(1)
	defer s.subs.Add(-1)
	_ = rc.SetWriteDeadline(time.Time{})
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	// On a store that is a session.Watcher, a stream of a session held
	// elsewhere reads the log's tail when the store says it grew (and
	// once every 30 polls, in case a notice was lost); else it reads the
	// log at every poll.
	f := &follower{}
	defer f.stop()
	for drained, read, polls := false, true, 0; ; {
		var evs []event
		var wake <-chan struct{}
		var err error
		if read {
			evs, wake, err = s.eventsAfter(ctx, rec, after, f)
		} else {
			wake = s.openedHere(rec.ID)
			if l := s.getLive(rec.ID); l != nil {
				wake = nil
				read = true
				continue
			}
		}
		if errors.Is(err, errNotFound) {
			fmt.Fprint(w, ": session deleted\n\n")
			_ = rc.Flush()
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("reading session events", "session", id, "err", err)
			}
		}
		for _, ev := range evs {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Kind, ev.Data); err != nil {
				return
			}
			after = ev.Seq
		}
		if len(evs) > 0 {
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if drained {
			return
		}
		read = false
		select {
		case <-ctx.Done():
			return
		case <-s.drainCh:
			drained, read = true, true // send what is left, then end
		case <-wake:
			read = true
		case <-f.changed():
			read = true
		case <-poll.C:
			polls++
			if f.watching() && polls%5 == 0 {
				if _, err := s.loadRecord(ctx, rec.Tenant, rec.ID); errors.Is(err, errNotFound) {
					fmt.Fprint(w, ": session deleted\n\n")
					_ = rc.Flush()
					return
				}
			}
			if !f.watching() || polls%5 == 0 {
				s.followUp(ctx, rec, t) // a record read: every fifth poll when the store tells of events
			}
			read = !f.watching() || polls%30 == 0
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}

// eventsAfter returns the session's events with seq > after and a channel
// closed at the next one when the session is open here, or when it opens
// here if it is not (the caller polls the store meanwhile). errNotFound
// when the session was deleted.
func (s *Server) eventsAfter(ctx context.Context, rec *record, after int64, f *follower) ([]event, <-chan struct{}, error) {
	if l := s.getLive(rec.ID); l != nil && l.tenant.ID == rec.Tenant {
		f.stop() // memory has them now
		evs, complete, wake := l.eventsAfter(after)
		if complete {
			return evs, wake, nil
		}
		stored, err := s.loadEvents(ctx, rec.Tenant, rec.ID, after)
		if err != nil {
			return nil, wake, err
		}
		// The store has at least what memory dropped; memory has the rest.
		if len(stored) > 0 {
			last := stored[len(stored)-1].Seq
			for _, ev := range evs {
				if ev.Seq > last {
					stored = append(stored, ev)
				}
			}
			return stored, wake, nil
		}
		return evs, wake, nil
	}
	// Not open here: read the store, and wake as soon as it opens here.
	opened := s.openedHere(rec.ID)
	if wt, ok := s.store.(session.Watcher); ok && f.watching() {
		// Deletion is noticed by the periodic record check (handleEvents).
		evs, err := s.followEvents(ctx, wt, rec, after, f)
		return evs, opened, err
	}
	if _, err := s.loadRecord(ctx, rec.Tenant, rec.ID); err != nil {
		return nil, nil, err
	}
	if wt, ok := s.store.(session.Watcher); ok {
		evs, err := s.followEvents(ctx, wt, rec, after, f)
		return evs, opened, err
	}
	evs, err := s.loadEvents(ctx, rec.Tenant, rec.ID, after)
	return evs, opened, err
}

// Drain stops taking work and closes every session open here: readyz
// answers 503 and new sessions and messages are refused at once; running
// turns may finish until ctx is done, then they are interrupted (their
// history stays valid); then every client is closed, every lease released
// and every event stream ended (after its last events). It returns ctx's error if turns had to be
// interrupted.
func (s *Server) Drain(ctx context.Context) error {
	first := s.draining.CompareAndSwap(false, true)
	s.log.Info("draining", "replica", s.cfg.ReplicaID)
	var interrupted error
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	durable := s.backend.Durable()
wait:
	for !durable { // a durable session's turn goes on without this replica
		busy := 0
		s.mu.Lock()
		for _, l := range s.live {
			if l.currentState() != stateIdle || l.conn.Queued() > 0 {
				busy++
			}
		}
		s.mu.Unlock()
		if busy == 0 {
			break
		}
		select {
		case <-ctx.Done():
			interrupted = fmt.Errorf("serve: drain: %d sessions still running, interrupted: %w", busy, ctx.Err())
			break wait
		case <-tick.C:
		}
	}
	s.mu.Lock()
	all := make([]*live, 0, len(s.live))
	for _, l := range s.live {
		all = append(all, l)
	}
	s.mu.Unlock()
	done := make(chan struct{}, len(all))
	for _, l := range all {
		go func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l.shutdown(sctx, !durable)
			done <- struct{}{}
		}()
	}
	for range all {
		<-done
	}
	if first {
		close(s.drainCh) // after the last events were published
	}
	s.log.Info("drained", "replica", s.cfg.ReplicaID, "sessions", len(all))
	return interrupted
}
