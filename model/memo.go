package model

import "sync"

// Memo is where a provider keeps what it derived from one session's last
// request (its encoded history, say), so that the session's next request
// costs only what changed. A session passes the same Memo with each of its
// requests ([Request.Memo]); a provider that keeps nothing ignores it, and
// one that does must check what it kept against the request before using
// it, since the caller may have changed anything in between.
//
// A provider takes the value out while it works and puts it back when it
// is done, so two requests sharing a Memo at once never share the value:
// the second finds nothing and starts afresh. The zero value is ready; a
// Memo must not be copied after first use.
type Memo struct {
	mu sync.Mutex
	v  any
}

// Take removes the value kept and returns it; nil when there is none, or
// when another request holds it.
func (m *Memo) Take() any {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.v
	m.v = nil
	return v
}

// Put keeps v, replacing what is kept.
func (m *Memo) Put(v any) {
	m.mu.Lock()
	m.v = v
	m.mu.Unlock()
}
