package agentloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// Client is a conversation of several prompts: each Query continues the
// history of the ones before it, and the session's cost and per-model usage
// accumulate across them. Settings such as the model may change between or
// during queries.
//
// A Client runs one query at a time; a Query started while another is
// being consumed yields ErrBusy. Its methods are safe for concurrent use.
// Close it to stop what its tools left running.
type Client struct {
	sess   *session
	busy   atomic.Bool
	mu     sync.Mutex
	closed bool
}

// ErrBusy is yielded by Client.Query while another query of the same client
// is running.
var ErrBusy = errors.New("agentloop: the client is already running a query")

// ErrClosed is returned by a closed client.
var ErrClosed = errors.New("agentloop: client closed")

// NewClient starts a conversation with opts (nil means defaults). It checks
// the options and credentials at once; no model call is made until Query.
func NewClient(opts *Options) (*Client, error) {
	sess, err := newSession(opts)
	if err != nil {
		return nil, err
	}
	return &Client{sess: sess}, nil
}

// SessionID returns the conversation's session id.
func (c *Client) SessionID() string { return c.sess.env.SessionID }

// Query sends the next prompt and returns the stream of its messages, which
// starts with system/init and ends with this prompt's result. The stream
// runs once; see Stream.
func (c *Client) Query(ctx context.Context, prompt string) Stream {
	var used atomic.Bool
	return func(yield func(Message, error) bool) {
		if used.Swap(true) {
			yield(nil, ErrStreamUsed)
			return
		}
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			yield(nil, ErrClosed)
			return
		}
		if !c.busy.CompareAndSwap(false, true) {
			yield(nil, ErrBusy)
			return
		}
		defer c.busy.Store(false)
		runTurn(ctx, c.sess, prompt, yield)
	}
}

// SetModel switches the model (an id or alias) from the next request on,
// also in the middle of a running query.
func (c *Client) SetModel(name string) {
	m := pricing.Resolve(name)
	c.sess.eng.SetModel(m)
}

// Model returns the current model id.
func (c *Client) Model() string { return c.sess.eng.Model() }

// SetMaxThinkingTokens sets thinking to enabled with this budget from the
// next request on; 0 restores the model's default (adaptive where
// supported). The budget must be at least 1024 tokens.
func (c *Client) SetMaxThinkingTokens(n int) error {
	switch {
	case n == 0:
		c.sess.eng.SetThinking(nil)
	case n < 1024:
		return fmt.Errorf("%w: thinking budget %d is below 1024 tokens", ErrInvalidOption, n)
	default:
		c.sess.eng.SetThinking(&model.Thinking{Type: "enabled", BudgetTokens: n})
	}
	return nil
}

// SetEffort changes the effort (low, medium, high, xhigh, max; empty for
// the API's default) from the next request on.
func (c *Client) SetEffort(e string) error {
	if e != "" && !slices.Contains(efforts, e) {
		return fmt.Errorf("%w: effort %q (want low, medium, high, xhigh or max)", ErrInvalidOption, e)
	}
	c.sess.eng.SetEffort(e)
	return nil
}

// Close ends the conversation and stops what its tools left running. It is
// safe to call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.sess.close()
	}
	return nil
}
