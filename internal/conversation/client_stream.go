package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/model"
	"github.com/google/uuid"
)

// Streaming input: the Go form of the SDKs' streaming mode (an
// AsyncIterable prompt in TypeScript, ClaudeSDKClient in Python). The host
// sends user messages whenever it likes with Client.Send; they wait in the
// client's queue, and Client.Messages runs them one after another, as
// turns of one conversation, yielding the messages of every turn in
// order. See docs/design.md, "Streaming input".

// The priorities of a queued UserInput, as the reference names them.
const (
	// PriorityNow runs the message before every other queued one and
	// interrupts the running turn, if any, to do so.
	PriorityNow = "now"
	// PriorityNext, the default, runs the message after the messages of
	// priority now and next queued before it.
	PriorityNext = "next"
	// PriorityLater runs the message after every message of priority now
	// or next, whenever it was queued.
	PriorityLater = "later"
)

// ErrInvalidInput is wrapped by Send's errors for a UserInput it refuses.
var ErrInvalidInput = errors.New("agentloop: invalid user input")

// ErrInterrupted is the cause of a turn that Client.Interrupt ended (or a
// PriorityNow message cut short): context.Cause of the turn's context, and
// part of the text of its error result.
var ErrInterrupted = errors.New("agentloop: interrupted")

// ErrInputDropped is wrapped by a *DroppedInputError.
var ErrInputDropped = errors.New("agentloop: queued user messages were not run")

// DroppedInputError is returned by Client.Close when messages sent with
// Client.Send were still queued: they never ran and never joined the
// conversation. errors.Is(err, ErrInputDropped) holds.
type DroppedInputError struct {
	// UUIDs are the dropped messages' uuids, in queue order.
	UUIDs []string
}

func (e *DroppedInputError) Error() string {
	return fmt.Sprintf("%s: %s", ErrInputDropped.Error(), strings.Join(e.UUIDs, ", "))
}

// Unwrap makes the error match ErrInputDropped.
func (e *DroppedInputError) Unwrap() error { return ErrInputDropped }

// UserInput is agentloop.UserInput as the session reads it; the fields are
// documented there.
type UserInput struct {
	Text        string
	Content     []model.Content
	UUID        string
	Priority    string
	ShouldQuery *bool
}

// InterruptOptions is agentloop.InterruptOptions as the session reads it; the fields are
// documented there.
type InterruptOptions struct {
	CancelQueued bool
}

// InterruptResult is agentloop.InterruptResult as the session reads it; the fields are
// documented there.
type InterruptResult struct {
	StillQueued []string
	Cancelled   []string
}

// queued is one message waiting in the inbox.
type queued struct {
	id     string
	blocks []model.Content
	rank   int // 0 now, 1 next, 2 later
	query  bool
	busy   bool // sent while a turn ran
}

// turn is the queued message being run.
type turn struct {
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the turn's result is out (or it ended without one)
	once   sync.Once
}

func (t *turn) finish() { t.once.Do(func() { close(t.done) }) }

// inbox is a Client's queue of sent messages. Its zero value is ready.
// Lock order: Client.mu before inbox.mu.
type inbox struct {
	mu      sync.Mutex
	q       []queued
	wake    chan struct{} // signalled when a message is queued
	running *turn         // the turn being run, if any
}

// wakeCh returns the wake channel; in.mu is held.
func (in *inbox) wakeCh() chan struct{} {
	if in.wake == nil {
		in.wake = make(chan struct{}, 1)
	}
	return in.wake
}

// ids are the uuids of q.
func ids(q []queued) []string {
	out := make([]string, 0, len(q))
	for _, m := range q {
		out = append(out, m.id)
	}
	return out
}

// drain empties the queue and returns what it held.
func (in *inbox) drain() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := ids(in.q)
	in.q = nil
	return out
}

// next waits for a message, takes it from the queue and makes it the
// running turn, with a context under ctx that Interrupt cancels. ok is
// false when ctx ended first.
func (in *inbox) next(ctx context.Context) (m queued, tctx context.Context, t *turn, ok bool) {
	for {
		if ctx.Err() != nil {
			return queued{}, nil, nil, false
		}
		in.mu.Lock()
		if len(in.q) > 0 {
			m, in.q = batch(in.q)
			tctx, cancel := context.WithCancelCause(ctx)
			t = &turn{cancel: cancel, done: make(chan struct{})}
			in.running = t
			in.mu.Unlock()
			return m, tctx, t, true
		}
		w := in.wakeCh()
		in.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
		}
	}
}

// end clears the running turn t.
func (in *inbox) end(t *turn) {
	t.finish()
	t.cancel(nil)
	in.mu.Lock()
	if in.running == t {
		in.running = nil
	}
	in.mu.Unlock()
}

// batch takes the head of q and, as the reference does with prompts that
// arrive while a turn runs, when the head was sent during a turn and may
// fold (client_fold.go), every such message queued right behind it: they
// run as one turn, their texts joined by a newline into one block (other
// blocks follow in order). Messages sent while no turn ran each run alone,
// as the reference starts a prompt that finds it idle at once. The turn
// carries the head's uuid; the others' uuids are not recorded. It returns
// the turn's message and the rest of the queue.
func batch(q []queued) (queued, []queued) {
	m := q[0]
	n := 1
	for m.busy && m.foldable() && n < len(q) && q[n].busy && q[n].foldable() {
		n++
	}
	if n == 1 {
		return m, q[1:]
	}
	var text []string
	var rest []model.Content
	for _, e := range q[:n] {
		for _, b := range e.blocks {
			if b.Type == model.TypeText {
				text = append(text, b.Text)
			} else {
				rest = append(rest, b)
			}
		}
	}
	blocks := make([]model.Content, 0, 1+len(rest))
	if len(text) > 0 {
		blocks = append(blocks, model.TextBlock(strings.Join(text, "\n")))
	}
	m.blocks = append(blocks, rest...)
	return m, q[n:]
}

// inputBlocks checks in and returns its blocks.
func inputBlocks(in UserInput) ([]model.Content, error) {
	var blocks []model.Content
	if in.Text != "" {
		blocks = append(blocks, model.TextBlock(in.Text))
	}
	for i, b := range in.Content {
		switch b.Type {
		case model.TypeText:
			if b.Text == "" {
				return nil, fmt.Errorf("%w: content block %d: empty text", ErrInvalidInput, i)
			}
		case model.TypeImage, model.TypeDocument:
			if b.Source == nil {
				return nil, fmt.Errorf("%w: content block %d: %s block without a source", ErrInvalidInput, i, b.Type)
			}
		default:
			return nil, fmt.Errorf("%w: content block %d: type %q cannot be sent (text, image or document)", ErrInvalidInput, i, b.Type)
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: no text and no content", ErrInvalidInput)
	}
	return blocks, nil
}

// priorityRank orders the priorities; ok is false for an unknown one.
func priorityRank(p string) (int, bool) {
	switch p {
	case PriorityNow:
		return 0, true
	case "", PriorityNext:
		return 1, true
	case PriorityLater:
		return 2, true
	}
	return 0, false
}

// Send is agentloop's Client.Send; see its doc there.
func (c *Client) Send(in UserInput) (string, error) {
	rank, ok := priorityRank(in.Priority)
	if !ok {
		return "", fmt.Errorf("%w: priority %q is not one of %q, %q, %q", ErrInvalidInput, in.Priority,
			PriorityNow, PriorityNext, PriorityLater)
	}
	blocks, err := inputBlocks(in)
	if err != nil {
		return "", err
	}
	m := queued{id: in.UUID, blocks: blocks, rank: rank, query: in.ShouldQuery == nil || *in.ShouldQuery}
	if m.id == "" {
		m.id = uuid.NewString()
	}
	c.mu.Lock() // held while queueing, so that Close sees every message it did not refuse
	defer c.mu.Unlock()
	if c.closed {
		return "", ErrClosed
	}
	c.in.mu.Lock()
	if slices.ContainsFunc(c.in.q, func(q queued) bool { return q.id == m.id }) {
		c.in.mu.Unlock()
		return "", fmt.Errorf("%w: uuid %s is already queued", ErrInvalidInput, m.id)
	}
	at := len(c.in.q)
	for i, q := range c.in.q {
		if q.rank > rank {
			at = i
			break
		}
	}
	m.busy = c.in.running != nil
	c.in.q = slices.Insert(c.in.q, at, m)
	select {
	case c.in.wakeCh() <- struct{}{}:
	default:
	}
	running := c.in.running
	c.in.mu.Unlock()
	if rank == 0 && running != nil {
		running.cancel(ErrInterrupted)
	}
	return m.id, nil
}

// Withdraw is agentloop's Client.Withdraw; see its doc there.
func (c *Client) Withdraw(id string) bool {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	i := slices.IndexFunc(c.in.q, func(q queued) bool { return q.id == id })
	if i < 0 {
		return false
	}
	c.in.q = slices.Delete(c.in.q, i, i+1)
	return true
}

// Queued is agentloop's Client.Queued; see its doc there.
func (c *Client) Queued() []string {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	return ids(c.in.q)
}

// Messages is agentloop's Client.Messages; see its doc there.
func (c *Client) Messages(ctx context.Context) Stream {
	var used atomic.Bool
	return func(yield func(Message, error) bool) {
		c.exclusive(ctx, &used, yield, func(ctx context.Context, deliver func(Message, error) bool) {
			c.sess.engine().BudgetAcrossRuns() // no run is going: the client is ours
			for {
				m, tctx, t, ok := c.in.next(ctx)
				if !ok {
					return
				}
				more := c.runQueued(ctx, tctx, t, m, deliver)
				c.in.end(t)
				if !more {
					return
				}
			}
		})
	}
}

// runQueued runs one queued message under tctx (the turn's context, under
// the stream's ctx) and reports whether the stream goes on.
func (c *Client) runQueued(ctx, tctx context.Context, t *turn, m queued, deliver func(Message, error) bool) bool {
	tctx = engine.WithPromptID(tctx, m.id)
	if !m.query {
		if _, err := c.sess.engine().AppendPrompt(tctx, m.blocks); err != nil {
			return deliver(nil, fmt.Errorf("agentloop: message %s not added to the conversation: %w", m.id, err))
		}
		return true
	}
	tctx = c.withFold(tctx, t) // client_fold.go
	more, sawResult := true, false
	c.sess.Run(tctx, m.blocks, func(msg Message, err error) bool {
		if err != nil && sawResult && ctx.Err() == nil {
			// The result said it; the turn's error (an error result, an
			// interrupt) does not end the stream.
			return true
		}
		if _, ok := msg.(*ResultMessage); ok {
			sawResult = true
			t.finish()
		}
		more = deliver(msg, err)
		return more
	})
	return more && ctx.Err() == nil
}

// Interrupt is agentloop's Client.Interrupt; see its doc there.
func (c *Client) Interrupt(ctx context.Context, opts *InterruptOptions) (InterruptResult, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return InterruptResult{}, ErrClosed
	}
	q := c.active
	c.mu.Unlock()
	c.in.mu.Lock()
	t := c.in.running
	if t == nil {
		c.in.mu.Unlock()
		return InterruptResult{}, nil
	}
	var res InterruptResult
	if opts != nil && opts.CancelQueued {
		res.Cancelled = ids(c.in.q)
		c.in.q = nil
	}
	res.StillQueued = ids(c.in.q)
	c.in.mu.Unlock()
	t.cancel(ErrInterrupted)
	if q != nil && q.delivering.Load() {
		return res, nil
	}
	select {
	case <-t.done:
		return res, nil
	case <-ctx.Done():
		return res, fmt.Errorf("agentloop: interrupt: waiting for the turn to end: %w", ctx.Err())
	}
}

// SetPermissionMode is agentloop's Client.SetPermissionMode; see its doc there.
func (c *Client) SetPermissionMode(mode PermissionMode) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	return c.sess.SetPermissionMode(mode)
}

// SetPermissionMode changes the mode the session's permission check uses
// from its next decision on. A mode the managed policy disables is
// refused (ErrPermissionModeDisabled).
func (s *Session) SetPermissionMode(mode PermissionMode) error {
	m, err := ParsePermissionMode(string(mode))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	if s.checker == nil {
		return errors.New("agentloop: set permission mode: the session has no permission checker")
	}
	if err := s.checker.SetMode(permission.Mode(m)); errors.Is(err, ErrPermissionModeDisabled) {
		return fmt.Errorf("agentloop: set permission mode: %w", err) // the error names the mode
	} else if err != nil {
		return fmt.Errorf("agentloop: set permission mode %s: %w", m, err)
	}
	return nil
}

// PermissionMode is agentloop's Client.PermissionMode; see its doc there.
func (c *Client) PermissionMode() PermissionMode { return c.sess.PermissionMode() }

// PermissionMode is the mode the session's permission check uses now.
func (s *Session) PermissionMode() PermissionMode { return s.currentMode() }
