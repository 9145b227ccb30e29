package tool

import "sync"

// State is a per-session store that tools use to share state across calls,
// such as which files were read or which background commands run. Keys should
// be unexported types of the package that owns the value, as with
// context.Context. The zero State is ready to use; it is safe for concurrent
// use.
type State struct {
	m sync.Map
}

// Load returns the value stored under key, creating it with mk when absent.
// mk may be called more than once under contention; only one result is kept.
func (s *State) Load(key any, mk func() any) any {
	if v, ok := s.m.Load(key); ok {
		return v
	}
	v, _ := s.m.LoadOrStore(key, mk())
	return v
}
