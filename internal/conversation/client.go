package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// Client is a conversation of several prompts: each Query continues the
// history of the ones before it, and the session's cost and per-model usage
// accumulate across them. Settings such as the model may change between or
// during queries.
//
// A Client runs one query at a time; a Query started while another is
// being consumed yields ErrBusy. Streaming input (Send, Messages,
// Interrupt; client_stream.go) is the other way to converse: messages
// queue and run as turns one after another. Its methods are safe for
// concurrent use.
// Close it to stop a running query and what its tools left running; after
// Close, every method that can fail returns ErrClosed.
type Client struct {
	sess    *Session
	mu      sync.Mutex
	closed  bool
	active  *activeQuery  // the query being consumed, if any
	cleaned chan struct{} // closed once Close's cleanup has run; made by the first need (cleanedChan)
	in      inbox         // messages sent for Messages (client_stream.go)
}

// activeQuery is the query a Client is running.
type activeQuery struct {
	cancel context.CancelCauseFunc
	// delivering is set while the consumer's loop body runs (the engine
	// is then waiting for it, and Close may be called from that body).
	delivering atomic.Bool
}

// ErrBusy is yielded by Client.Query while another query of the same client
// is running.
var ErrBusy = errors.New("agentloop: the client is already running a query")

// ErrClosed is returned by a closed client, and is the cause of a query
// that Close cancelled.
var ErrClosed = errors.New("agentloop: client closed")

// ErrCloseTimeout is returned by Close when the running query did not stop
// within CloseTimeout (a tool that ignores cancellation, say). The cleanup
// then runs when the query stops.
var ErrCloseTimeout = errors.New("agentloop: the running query did not stop in time")

// CloseTimeout bounds how long Close waits for a running query to stop.
const CloseTimeout = 5 * time.Second

// closeTimeout is CloseTimeout, shortened by tests.
var closeTimeout = CloseTimeout

// NewClient starts a conversation with opts (nil means defaults). It checks
// the options and credentials at once; no model call is made until Query.
// It keeps no reference to *opts (the session copies it), so the caller
// may reuse it.
func NewClient(opts *Config) (*Client, error) {
	sess, err := NewSession(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	return &Client{sess: sess}, nil
}

// SessionID is agentloop's Client.SessionID; see its doc there.
func (c *Client) SessionID() string { return c.sess.ID() }

// Query is agentloop's Client.Query; see its doc there.
func (c *Client) Query(ctx context.Context, prompt string) Stream {
	var used atomic.Bool
	return func(yield func(Message, error) bool) {
		c.exclusive(ctx, &used, yield, func(ctx context.Context, deliver func(Message, error) bool) {
			runTurn(ctx, c.sess, prompt, deliver)
		})
	}
}

// QueryContent is agentloop's Client.QueryContent; see its doc there.
func (c *Client) QueryContent(ctx context.Context, content []model.Content) Stream {
	var used atomic.Bool
	return func(yield func(Message, error) bool) {
		blocks, err := inputBlocks(UserInput{Content: content})
		if err != nil {
			if !used.Swap(true) {
				yield(nil, err)
			}
			return
		}
		c.exclusive(ctx, &used, yield, func(ctx context.Context, deliver func(Message, error) bool) {
			c.sess.Run(ctx, blocks, deliver)
		})
	}
}

// exclusive runs body as the client's one active stream. It yields the
// error instead when the stream was used already (ErrStreamUsed), the
// client is closed (ErrClosed) or another stream is active (ErrBusy).
// Otherwise body runs under a context that Close cancels, and deliver
// passes its messages to yield, marking the time the consumer's loop
// body runs (Close may be called from there).
func (c *Client) exclusive(ctx context.Context, used *atomic.Bool, yield func(Message, error) bool,
	body func(ctx context.Context, deliver func(Message, error) bool)) {
	if used.Swap(true) {
		yield(nil, ErrStreamUsed)
		return
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		yield(nil, ErrClosed)
		return
	case c.active != nil:
		c.mu.Unlock()
		yield(nil, ErrBusy)
		return
	}
	ctx, cancel := context.WithCancelCause(ctx)
	q := &activeQuery{cancel: cancel}
	c.active = q
	c.mu.Unlock()
	defer c.endQuery(q)
	body(ctx, func(m Message, err error) bool {
		q.delivering.Store(true)
		defer q.delivering.Store(false)
		return yield(m, err)
	})
}

// endQuery ends the running query; when Close came meanwhile, the cleanup
// it left runs now.
func (c *Client) endQuery(q *activeQuery) {
	q.cancel(nil)
	c.mu.Lock()
	c.active = nil
	closed := c.closed
	c.mu.Unlock()
	if closed {
		c.cleanup()
	}
}

// cleanup ends the session once no query runs: SessionEnd hooks,
// background shells, the transcript.
func (c *Client) cleanup() {
	c.sess.endReason = "prompt_input_exit"
	c.sess.Close()
	c.mu.Lock()
	if c.cleaned == nil {
		c.cleaned = closedChan()
	} else {
		close(c.cleaned)
	}
	c.mu.Unlock()
}

var closedChanOnce lazy.Value[chan struct{}] // the value of closedChan, made at its first use

// closedChan returns a closed channel, the same each time: the cleanup's
// signal when nobody waited.
func closedChan() chan struct{} {
	return closedChanOnce.Get(func() chan struct{} {
		ch := make(chan struct{})
		close(ch)
		return ch
	})
}

// cleanedChan is the channel closed once Close's cleanup has run. It is
// made by the first call (a Close that waits for the running query), so
// that an idle Client keeps none.
func (c *Client) cleanedChan() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cleaned == nil {
		c.cleaned = make(chan struct{})
	}
	return c.cleaned
}

// checkOpen returns ErrClosed after Close.
func (c *Client) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

// SetModel is agentloop's Client.SetModel; see its doc there.
func (c *Client) SetModel(name string) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: SetModel: want a model id or alias, not %q", ErrInvalidOption, name)
	}
	if err := c.sess.modelAllowed(name, "model"); err != nil { // managed_policy.go
		return err
	}
	c.sess.engine().SetModel(pricing.Resolve(name))
	return nil
}

// Model is agentloop's Client.Model; see its doc there.
func (c *Client) Model() string { return c.sess.currentModel() }

// Effort is agentloop's Client.Effort; see its doc there.
func (c *Client) Effort() string { return c.sess.currentEffort() }

// SetMaxThinkingTokens is agentloop's Client.SetMaxThinkingTokens; see its doc there.
func (c *Client) SetMaxThinkingTokens(n int) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	switch {
	case n == 0:
		c.sess.engine().SetThinking(nil)
	case n < 1024:
		return fmt.Errorf("%w: thinking budget %d is below 1024 tokens", ErrInvalidOption, n)
	default:
		c.sess.engine().SetThinking(&model.Thinking{Type: ThinkingEnabled, BudgetTokens: n})
	}
	return nil
}

// SetEffort is agentloop's Client.SetEffort; see its doc there.
func (c *Client) SetEffort(e string) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	if e != "" && !vocab.Efforts.Contains(e) {
		return fmt.Errorf("%w: %w", ErrInvalidOption, effortError(e))
	}
	c.sess.engine().SetEffort(e)
	return nil
}

// Close is agentloop's Client.Close; see its doc there.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	q := c.active
	c.mu.Unlock()
	var dropped error // messages Send queued that will never run
	if ids := c.in.drain(); len(ids) > 0 {
		dropped = &DroppedInputError{UUIDs: ids}
	}
	if q == nil {
		c.cleanup()
		return dropped
	}
	q.cancel(ErrClosed)
	if q.delivering.Load() {
		return dropped
	}
	cleaned := c.cleanedChan()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-cleaned:
		return dropped
	case <-t.C:
		return errors.Join(fmt.Errorf("%w within %v; the session ends when it does", ErrCloseTimeout, closeTimeout), dropped)
	}
}
