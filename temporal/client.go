package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
)

// PollInterval is how soon a session asks its workflow again for new
// messages after an answer with none; the wait doubles with each empty
// answer up to MaxPollInterval, and starts over when messages come.
// QueryPatience is how long it goes on asking while no worker answers.
var (
	PollInterval    = 20 * time.Millisecond
	MaxPollInterval = 500 * time.Millisecond
	QueryPatience   = time.Minute
)

// ErrSessionBusy is returned for a prompt sent while the session's last
// one still runs.
var ErrSessionBusy = errors.New("agentloop/temporal: the session is busy with a prompt")

// Query runs prompt as a one-prompt durable session on the workers of
// queue and returns its messages as agentloop.Query does: the same
// stream, ending in a result (and, after an error result, its error).
// opts carries only the options a SessionInput holds; anything else is
// ErrUnsupported (set it on the workers' Options). Nothing happens until
// the stream is consumed. Breaking out of the range cancels the workflow.
//
// The session id is opts.SessionID, or a new one; the workflow id is
// "agentloop-" followed by it.
func Query(ctx context.Context, c client.Client, queue, prompt string, opts *agentloop.Options) agentloop.Stream {
	var used atomic.Bool
	return func(yield func(agentloop.Message, error) bool) {
		if used.Swap(true) {
			yield(nil, agentloop.ErrStreamUsed)
			return
		}
		if prompt == "" {
			yield(nil, fmt.Errorf("%w: empty prompt", agentloop.ErrInvalidOption))
			return
		}
		s, err := start(ctx, c, queue, prompt, opts, nil)
		if err != nil {
			yield(nil, err)
			return
		}
		if s.read(ctx, 0, yield) {
			_ = s.Close(ctx)
			return
		}
		_ = c.CancelWorkflow(context.WithoutCancel(ctx), s.run.GetID(), "")
	}
}

// Session is a durable session held by a client: its workflow keeps the
// conversation between prompts, on whichever worker runs it, until Close
// or until it has waited SessionInput.IdleTimeout for a prompt. One prompt
// runs at a time. Methods are safe for concurrent use.
type Session struct {
	c    client.Client
	run  client.WorkflowRun
	opts *agentloop.Options

	mu       sync.Mutex
	answered map[string]bool // permission requests this client answered
}

// SessionOptions are the durable session's own settings; the zero value
// gives the defaults.
type SessionOptions struct {
	// IdleTimeout is how long the session waits for its next prompt
	// before it ends; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// ContinueAfter is the workflow history length (events) past which
	// the session goes on in a new run between prompts; 0 means
	// DefaultContinueAfter.
	ContinueAfter int
}

// Open starts a durable session with no prompt yet; see Session.Query.
// so may be nil.
func Open(ctx context.Context, c client.Client, queue string, opts *agentloop.Options, so *SessionOptions) (*Session, error) {
	return start(ctx, c, queue, "", opts, so)
}

// start starts the session's workflow, with its first prompt if any.
func start(ctx context.Context, c client.Client, queue, prompt string, opts *agentloop.Options, so *SessionOptions) (*Session, error) {
	switch {
	case c == nil:
		return nil, fmt.Errorf("%w: no Temporal client", agentloop.ErrInvalidOption)
	case queue == "":
		return nil, fmt.Errorf("%w: no task queue", agentloop.ErrInvalidOption)
	}
	in, err := inputOf(prompt, opts)
	if err != nil {
		return nil, err
	}
	if so != nil {
		if so.IdleTimeout < 0 || so.ContinueAfter < 0 {
			return nil, fmt.Errorf("%w: SessionOptions: negative IdleTimeout or ContinueAfter", agentloop.ErrInvalidOption)
		}
		in.IdleTimeout, in.ContinueAfter = so.IdleTimeout, so.ContinueAfter
	}
	if in.SessionID == "" {
		in.SessionID = uuid.NewString()
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "agentloop-" + in.SessionID, TaskQueue: queue},
		WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("agentloop/temporal: starting the session: %w", err)
	}
	return &Session{c: c, run: run, opts: opts, answered: map[string]bool{}}, nil
}

// ID is the session's workflow id.
func (s *Session) ID() string { return s.run.GetID() }

// Query sends prompt to the session and streams its run's messages, as
// agentloop.Client.Query does. Breaking out of the range stops reading but
// not the run (Close, or cancel the workflow, to stop it).
func (s *Session) Query(ctx context.Context, prompt string) agentloop.Stream {
	return func(yield func(agentloop.Message, error) bool) {
		var from int
		err := s.updateResult(ctx, &from, UpdatePrompt, prompt)
		if err != nil {
			if strings.Contains(err.Error(), errBusyText) {
				err = fmt.Errorf("%w (%w)", ErrSessionBusy, err)
			}
			yield(nil, fmt.Errorf("agentloop/temporal: sending the prompt: %w", err))
			return
		}
		s.read(ctx, from, yield)
	}
}

// Interrupt stops the run under way, as agentloop.Client.Interrupt does:
// the calls it leaves open get interrupted results, its stream ends with
// its result, and the session waits for the next prompt. Without a run it
// does nothing.
func (s *Session) Interrupt(ctx context.Context) error {
	return s.update(ctx, UpdateInterrupt)
}

// SetModel changes the model of the session's next requests (an alias
// such as "sonnet" is resolved).
func (s *Session) SetModel(ctx context.Context, model string) error {
	return s.update(ctx, UpdateSetModel, model)
}

// SetPermissionMode changes the permission mode of the session's next
// decisions, on whichever worker makes them.
func (s *Session) SetPermissionMode(ctx context.Context, mode agentloop.PermissionMode) error {
	return s.update(ctx, UpdateSetPermissionMode, string(mode))
}

// update sends the Update name with args and waits for it to complete.
func (s *Session) update(ctx context.Context, name string, args ...any) error {
	if err := s.updateResult(ctx, nil, name, args...); err != nil {
		return fmt.Errorf("agentloop/temporal: %s: %w", name, err)
	}
	return nil
}

// updateResult sends the Update name to the session's current run and
// stores its result in out (nil: none). An Update that reaches a run as it
// hands over to the next one (continue-as-new, between prompts) is sent
// again, to the new run.
func (s *Session) updateResult(ctx context.Context, out any, name string, args ...any) error {
	for attempt := 0; ; attempt++ {
		h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.run.GetID(),
			UpdateName: name, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, out)
		}
		if err == nil || attempt >= 20 || !strings.Contains(err.Error(), "already completed") {
			return err
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// Close ends the session once its current run is over and waits for the
// workflow to complete.
func (s *Session) Close(ctx context.Context) error {
	if err := s.update(ctx, UpdateClose); err != nil {
		return err
	}
	if err := s.c.GetWorkflow(ctx, s.run.GetID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("agentloop/temporal: closing the session: %w", err)
	}
	return nil
}

// read yields the session's messages from line from until a run's result
// (and its error, for an error result), answering the client's permission
// requests on the way. It returns true when the run's messages were all
// read, false when yield stopped it or reading failed.
func (s *Session) read(ctx context.Context, from int, yield func(agentloop.Message, error) bool) bool {
	var failingSince time.Time
	wait := PollInterval
	for {
		ev, err := events(ctx, s.c, s.run, from)
		if err != nil {
			// A query fails while no worker can answer it (the one
			// holding the session died and another is taking over): the
			// messages are in the history, so ask again, for up to
			// QueryPatience.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) > QueryPatience || ctx.Err() != nil {
				yield(nil, err)
				return false
			}
			sleep(ctx, 4*PollInterval)
			continue
		}
		failingSince = time.Time{}
		if err := s.answerAsks(ctx, ev.Asks); err != nil {
			yield(nil, err)
			return false
		}
		for _, line := range ev.Lines {
			from++
			m, err := message.Decode(line)
			if err != nil {
				yield(nil, fmt.Errorf("agentloop/temporal: message %d: %w", from, err))
				return false
			}
			if !yield(m, nil) {
				return false
			}
			if r, ok := m.(*message.Result); ok {
				if r.IsError {
					yield(nil, r.Err())
				}
				return true
			}
		}
		if ev.Done && len(ev.Lines) == 0 {
			if ev.Err != "" {
				yield(nil, errors.New(ev.Err))
				return false
			}
			yield(nil, errors.New("agentloop/temporal: the session ended before the run's result"))
			return false
		}
		if len(ev.Lines) > 0 {
			wait = PollInterval
			continue
		}
		if ctx.Err() != nil {
			yield(nil, ctx.Err())
			return false
		}
		sleep(ctx, wait)
		wait = min(2*wait, MaxPollInterval)
	}
}

// answerAsks answers, with the client's CanUseTool, the permission
// requests it has not answered yet. An error of the callback is a denial
// with its text, as in-process.
func (s *Session) answerAsks(ctx context.Context, asks []Ask) error {
	for _, a := range asks {
		s.mu.Lock()
		done := s.answered[a.ID]
		s.mu.Unlock()
		if done || s.opts == nil || s.opts.CanUseTool == nil {
			continue
		}
		res, err := s.opts.CanUseTool(ctx, a.Request)
		if err != nil {
			res = agentloop.Deny(err.Error())
		}
		if err := s.updateResult(ctx, nil, UpdatePermission, PermissionAnswer{ID: a.ID, Result: res}); err != nil {
			return fmt.Errorf("agentloop/temporal: answering the permission request of %s: %w", a.ID, err)
		}
		s.mu.Lock()
		s.answered[a.ID] = true
		s.mu.Unlock()
	}
	return nil
}

// events asks the workflow for its messages from index from.
func events(ctx context.Context, c client.Client, run client.WorkflowRun, from int) (Events, error) {
	v, err := c.QueryWorkflow(ctx, run.GetID(), "", QueryEvents, from) // the current run
	if err != nil {
		return Events{}, fmt.Errorf("agentloop/temporal: reading the session's messages: %w", err)
	}
	var ev Events
	if err := v.Get(&ev); err != nil {
		return Events{}, fmt.Errorf("agentloop/temporal: reading the session's messages: %w", err)
	}
	return ev, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
