package engine

import (
	"sync"

	"github.com/agentloop/agentloop/message"
)

// notes queues messages that other goroutines (hooks, subagents inside a
// tool) emit into the run's stream; the loop goroutine emits them at its
// next step, so a consumer still sees every message from one goroutine.
type notes struct {
	mu   sync.Mutex
	q    []message.Message
	wake chan struct{} // made by the first use (wakeChan): an idle session has none
}

// wakeChan is the channel a queued note signals (buffer 1).
func (n *notes) wakeChan() chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.wake == nil {
		n.wake = make(chan struct{}, 1)
	}
	return n.wake
}

// Notify emits m into the stream of the run in progress. It is safe to call
// from any goroutine: the message is queued and the loop emits it before
// its next message (or, while tools run, as soon as it can). Messages
// queued with no run in progress are dropped when the next run starts.
func (s *Session) Notify(m message.Message) {
	s.notes.mu.Lock()
	s.notes.q = append(s.notes.q, m)
	s.notes.mu.Unlock()
	select {
	case s.notes.wakeChan() <- struct{}{}:
	default:
	}
}

// drain emits the queued notes; it runs on the loop goroutine.
func (r *run) drain() {
	n := &r.s.notes
	n.mu.Lock()
	q := n.q
	n.q = nil
	n.mu.Unlock()
	for _, m := range q {
		if r.stopped || !r.emit(m) {
			r.stopped = true
			return
		}
	}
}
