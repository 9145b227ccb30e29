package mcp

import (
	"fmt"
	"time"

	"github.com/agentloop/agentloop/tool"
)

// A server that fails (at start, or when its connection dies later) is
// reconnected in the background: a round of at most Connector.RetryAttempts
// attempts, the first after Connector.RetryBackoff, each wait twice the
// one before (capped at maxRetryBackoff). Each attempt is an ordinary
// connect, bounded by the start timeout, so the status shows pending
// while it runs and connected or failed after; a connection that succeeds
// announces its tools to the watcher, and the session declares them from
// its next model request. Nothing waits for a round: a turn is never held
// up by it. When a round gives up, the session starts a new one before its
// next query (RetryFailed), whose first attempt is made at once. A disabled
// server, or closed clients, stop a round.

// The retry defaults (see Connector).
const (
	defaultRetryAttempts = 3
	defaultRetryBackoff  = 2 * time.Second
	maxRetryBackoff      = 30 * time.Second
)

var _ tool.MCPRetrier = (*Clients)(nil)

// RetryFailed implements [tool.MCPRetrier].
func (cl *Clients) RetryFailed() {
	for _, name := range cl.order {
		cl.servers[name].retry(true)
	}
}

// retryPolicy is the number of attempts of a round and the first wait.
func (c Connector) retryPolicy() (int, time.Duration) {
	attempts, backoff := c.RetryAttempts, c.RetryBackoff
	if attempts == 0 {
		attempts = defaultRetryAttempts
	}
	if backoff <= 0 {
		backoff = defaultRetryBackoff
	}
	return attempts, backoff
}

// retry starts a round of reconnection attempts when the server is failed,
// not disabled, and no round runs; now makes the first attempt at once.
func (s *server) retry(now bool) {
	attempts, backoff := s.conn.retryPolicy()
	wait := backoff
	if now {
		wait = 0
	}
	if attempts <= 0 || s.cl == nil {
		return
	}
	s.mu.Lock()
	if s.retrying || s.closed || s.disabled || s.sess != nil || s.state != tool.MCPFailed {
		s.mu.Unlock()
		return
	}
	s.retrying = true
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			s.retrying = false
			s.mu.Unlock()
		}()
		life := s.cl.life
		for i := 1; i <= attempts; i++ {
			t := time.NewTimer(wait)
			select {
			case <-life.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(max(2*wait, backoff), maxRetryBackoff)
			s.mu.Lock()
			stop := s.closed || s.disabled || s.sess != nil
			s.mu.Unlock()
			if stop {
				return
			}
			err := s.connect(life)
			switch {
			case err == nil:
				s.report(fmt.Sprintf("reconnected (attempt %d of %d)", i, attempts))
				return
			case life.Err() != nil:
				return
			case i == attempts:
				s.report(fmt.Sprintf("still failing after %d reconnection attempts (%v); tried again before the next query", attempts, err))
			}
		}
	}()
}
