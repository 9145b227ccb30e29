package serve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/session"
)

// follower is an event stream's hold on a session's log in a store that
// is a session.Watcher: the watch of the log, and how many of its entries
// the stream has read, so that each read takes only the tail.
type follower struct {
	cancel context.CancelFunc
	ch     <-chan struct{}
	read   int // entries of the log read
}

// changed is the watch's channel (nil, which never fires, without one).
func (f *follower) changed() <-chan struct{} { return f.ch }

// watching says whether the stream is told of new events.
func (f *follower) watching() bool { return f.ch != nil }

// stop ends the watch.
func (f *follower) stop() {
	if f.cancel != nil {
		f.cancel()
	}
	f.cancel, f.ch = nil, nil
}

// followEvents returns the events of rec's log with seq > after, reading
// only the entries past those read before, and keeps a watch of the log
// (made again when it ended).
func (s *Server) followEvents(ctx context.Context, wt session.Watcher, rec *record, after int64, f *follower) ([]event, error) {
	k := recordKey(rec.Tenant, rec.ID)
	k.Subpath = subEvents
	if f.ch == nil {
		// Watch before reading: an append between the read and the
		// watch is not missed.
		wctx, cancel := context.WithCancel(ctx)
		ch, err := wt.Watch(wctx, k)
		if err != nil {
			cancel()
			s.log.Warn("watching a session's events; polling instead", "session", rec.ID, "err", err)
		} else {
			f.cancel, f.ch = cancel, ch
		}
	} else {
		select {
		case _, open := <-f.ch:
			if !open { // the watch ended (its connection failed): watch again next time
				f.stop()
			}
		default:
		}
	}
	entries, err := wt.LoadFrom(ctx, k, f.read)
	if err != nil {
		return nil, fmt.Errorf("serve: loading the events of session %s: %w", rec.ID, err)
	}
	f.read += len(entries)
	var out []event
	for _, e := range entries {
		if e.Type != typeEvent {
			continue
		}
		var ev event
		if json.Unmarshal(e.Extra["event"], &ev) != nil || ev.Seq <= after {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Seq >= ev.Seq {
			continue // a duplicate from a holder that lost its lease
		}
		out = append(out, ev)
	}
	return out, nil
}
