package session

import (
	"context"
	"sync"
)

// A Watcher is a Store that tells of appends and reads a transcript's
// tail: a follower of a transcript (serve's event streams on a replica
// that does not hold the session) waits for Watch's signal and reads
// only what is new, rather than reading the whole transcript again on a
// timer. MemoryStore, the PostgreSQL store (LISTEN/NOTIFY) and the Redis
// store (pub/sub) are Watchers.
type Watcher interface {
	// Watch returns a channel that receives a value after entries were
	// appended to key's transcript, by any user of the store; values are
	// coalesced (one may stand for several appends), and one may come
	// without news. The channel is closed when ctx ends or the watch
	// fails; the caller then reads, and may watch again.
	Watch(ctx context.Context, key Key) (<-chan struct{}, error)
	// LoadFrom returns the entries of key's transcript from index from
	// on (0: all, as Load).
	LoadFrom(ctx context.Context, key Key, from int) ([]Entry, error)
}

var _ Watcher = (*MemoryStore)(nil)

// memWatchers are a MemoryStore's watches, by key.
type memWatchers struct {
	mu sync.Mutex
	m  map[Key]map[chan struct{}]bool
}

func (w *memWatchers) add(key Key, c chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[Key]map[chan struct{}]bool{}
	}
	if w.m[key] == nil {
		w.m[key] = map[chan struct{}]bool{}
	}
	w.m[key][c] = true
}

func (w *memWatchers) remove(key Key, c chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m[key], c)
	if len(w.m[key]) == 0 {
		delete(w.m, key)
	}
	close(c)
}

func (w *memWatchers) notify(key Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.m[key] {
		select {
		case c <- struct{}{}:
		default: // one is pending already
		}
	}
}

// Watch implements Watcher.
func (s *MemoryStore) Watch(ctx context.Context, key Key) (<-chan struct{}, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	c := make(chan struct{}, 1)
	s.watch.add(key, c)
	context.AfterFunc(ctx, func() { s.watch.remove(key, c) })
	return c, nil
}

// LoadFrom implements Watcher.
func (s *MemoryStore) LoadFrom(ctx context.Context, key Key, from int) ([]Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.data[key]
	if t == nil || from >= len(t.entries) {
		return nil, nil
	}
	from = max(from, 0)
	out := make([]Entry, len(t.entries)-from)
	for i, e := range t.entries[from:] {
		out[i] = e.Clone()
	}
	return out, nil
}
