package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/agentloop/agentloop/session"
)

var _ session.Watcher = (*Store)(nil)

// channel is the NOTIFY channel of key's transcript: a name of its own
// per table and key, within PostgreSQL's 63-byte identifiers.
func (s *Store) channel(key session.Key) string {
	sum := sha256.Sum256([]byte(s.table + "\x00" + key.ProjectKey + "\x00" + key.SessionID + "\x00" + key.Subpath))
	return "agentloop_" + hex.EncodeToString(sum[:20])
}

// listener holds the one connection a Store listens on for all its
// watches (LISTEN/NOTIFY), taken at the first watch and given up when the
// last ends.
type listener struct {
	mu        sync.Mutex
	running   bool
	subs      map[string]map[chan struct{}]bool // by channel
	pending   []listenCmd                       // LISTEN / UNLISTEN to send
	interrupt context.CancelFunc                // stops the wait to send pending
	// ready holds, by channel, what a new watch waits on until its
	// LISTEN is in effect (closed then, or when the listener fails).
	ready map[string]chan struct{}
}

// listenCmd is a LISTEN or UNLISTEN of channel ch.
type listenCmd struct {
	sql, ch string
	listen  bool
}

// Watch implements [session.Watcher] with LISTEN/NOTIFY: Append notifies
// the transcript's channel in its transaction, so a watch hears of
// entries once they are committed.
func (s *Store) Watch(ctx context.Context, key session.Key) (<-chan struct{}, error) {
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("postgres: watch: %w", err)
	}
	ch := s.channel(key)
	out := make(chan struct{}, 1)
	l := &s.listen
	l.mu.Lock()
	if l.subs == nil {
		l.subs = map[string]map[chan struct{}]bool{}
	}
	if l.subs[ch] == nil {
		l.subs[ch] = map[chan struct{}]bool{}
		l.pending = append(l.pending, listenCmd{"LISTEN " + quoteIdent(ch), ch, true})
		if l.ready == nil {
			l.ready = map[string]chan struct{}{}
		}
		if l.ready[ch] == nil {
			l.ready[ch] = make(chan struct{})
		}
	}
	ready := l.ready[ch] // nil once the channel is listened to
	l.subs[ch][out] = true
	start := !l.running
	if start {
		l.running = true
	} else if l.interrupt != nil {
		l.interrupt()
	}
	l.mu.Unlock()
	if start {
		// Outside the lock: notifications keep flowing to nobody yet,
		// and other watches and unwatches do not wait for the pool.
		conn, err := s.conns.Listen(ctx, s.notified)
		if err != nil {
			l.closeAll() // the watches made meanwhile watch again
			return nil, fmt.Errorf("postgres: watch %s: %w", keyString(key), err)
		}
		go s.listenLoop(conn)
	}
	context.AfterFunc(ctx, func() { s.unwatch(ch, out) })
	if ready != nil {
		// Return once an append committed from now on is heard.
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("postgres: watch %s: %w", keyString(key), ctx.Err())
		}
	}
	return out, nil
}

// unwatch ends one watch.
func (s *Store) unwatch(ch string, out chan struct{}) {
	l := &s.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.subs[ch][out] {
		return // closed by a failed loop already
	}
	delete(l.subs[ch], out)
	close(out)
	if len(l.subs[ch]) == 0 {
		delete(l.subs, ch)
		l.pending = append(l.pending, listenCmd{"UNLISTEN " + quoteIdent(ch), ch, false})
		if l.interrupt != nil {
			l.interrupt()
		}
	}
}

// closeAll ends every watch (their owners read and watch again) and
// marks the listener stopped.
func (l *listener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, subs := range l.subs {
		for c := range subs {
			close(c)
		}
	}
	for _, r := range l.ready {
		close(r)
	}
	l.subs, l.pending, l.running, l.interrupt, l.ready = nil, nil, false, nil, nil
}

// listening marks ch's LISTEN in effect, unless a later command (in
// rest, or pending since) changes it again.
func (l *listener) listening(ch string, rest []listenCmd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, cs := range [][]listenCmd{rest, l.pending} {
		for _, c := range cs {
			if c.ch == ch {
				return
			}
		}
	}
	if r := l.ready[ch]; r != nil {
		close(r)
		delete(l.ready, ch)
	}
}

// notified hands a notification to its channel's watches.
func (s *Store) notified(channel string) {
	l := &s.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.subs[channel] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// listenLoop owns the listening connection: it sends the pending LISTEN
// and UNLISTEN commands and waits for notifications (which the connection
// hands to notified). When no watch is left it gives the connection up;
// when the connection fails, it closes every watch (their owners read
// and watch again).
func (s *Store) listenLoop(conn Listener) {
	l := &s.listen
	ctx := context.Background()
	exec := func(sql string) error { return conn.Conn().Exec(ctx, sql).Close() }
	fail := func() {
		l.closeAll()
		conn.Release(false) // its LISTEN state must not be reused
	}
	for {
		l.mu.Lock()
		cmds := l.pending
		l.pending, l.interrupt = nil, nil
		if len(l.subs) == 0 && len(cmds) == 0 {
			l.running = false
			l.mu.Unlock()
			conn.Release(exec("UNLISTEN *") == nil)
			return
		}
		l.mu.Unlock()
		for i, c := range cmds {
			if err := exec(c.sql); err != nil {
				fail()
				return
			}
			if c.listen {
				l.listening(c.ch, cmds[i+1:])
			}
		}
		wctx, cancel := context.WithCancel(ctx)
		l.mu.Lock()
		if len(l.pending) > 0 || len(l.subs) == 0 {
			l.mu.Unlock()
			cancel()
			continue
		}
		l.interrupt = cancel
		l.mu.Unlock()
		err := conn.Wait(wctx)
		interrupted := wctx.Err() != nil
		cancel()
		if err != nil {
			if interrupted {
				continue
			}
			fail()
			return
		}
	}
}

// LoadFrom implements [session.Watcher]: the entries past the first from.
func (s *Store) LoadFrom(ctx context.Context, key session.Key, from int) ([]session.Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("postgres: load: %w", err)
	}
	return s.load(ctx, key, s.q.load+" OFFSET $4", max(from, 0), max(from, 0))
}
