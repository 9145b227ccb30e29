package tool

import (
	"sync"
	"sync/atomic"
)

// State is a per-session store that tools use to share state across calls,
// such as which files were read or which background commands run. Keys should
// be unexported types of the package that owns the value, as with
// context.Context. The zero State is ready to use; it is safe for concurrent
// use.
//
// A session holds a handful of keys, most of them made by its first run,
// so the State keeps them in a small list it replaces (never changes) on
// each new key: reading takes no lock, and an unused State allocates
// nothing.
type State struct {
	mu      sync.Mutex // serialises adding a key
	entries atomic.Pointer[[]stateEntry]
}

// stateEntry is one key of a State and its value.
type stateEntry struct {
	key, value any
}

// find returns the value under key in the current list.
func (s *State) find(key any) (any, bool) {
	if p := s.entries.Load(); p != nil {
		for _, e := range *p {
			if e.key == key {
				return e.value, true
			}
		}
	}
	return nil, false
}

// Load returns the value stored under key, creating it with mk when absent.
// mk may be called more than once under contention; only one result is kept.
func (s *State) Load(key any, mk func() any) any {
	if v, ok := s.find(key); ok {
		return v
	}
	v := mk()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.find(key); ok {
		return old
	}
	var cur []stateEntry
	if p := s.entries.Load(); p != nil {
		cur = *p
	}
	next := make([]stateEntry, len(cur), len(cur)+1)
	copy(next, cur)
	next = append(next, stateEntry{key: key, value: v})
	s.entries.Store(&next)
	return v
}
