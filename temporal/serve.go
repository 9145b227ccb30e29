package temporal

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/serve"
)

// ServeBackend returns the serve.Backend of `agentloop serve --temporal`:
// each session is a SessionWorkflow on the workers of queue (started, or
// found running, when a replica opens it), so its turn goes on when the
// replica that relayed it dies; the replica only relays the workflow's
// messages into the session's event log, numbered by their line in the
// workflow so that the replica taking over goes on after the last one
// published. A session whose workflow ended (idle for
// SessionOptions.IdleTimeout) starts a new one from the conversation the
// last one ended with (Summary.Carry).
//
// base must be the Options the workers start sessions from (Config.Base
// and the server's own fields, as Server.SessionOptions gives them): a
// session option that differs from it and that a SessionInput does not
// carry (mcp_servers, agents) is refused with ErrUnsupported. so may be
// nil.
func ServeBackend(c client.Client, queue string, base *agentloop.Options, so *SessionOptions) (serve.Backend, error) {
	switch {
	case c == nil:
		return nil, fmt.Errorf("%w: no Temporal client", agentloop.ErrInvalidOption)
	case queue == "":
		return nil, fmt.Errorf("%w: no task queue", agentloop.ErrInvalidOption)
	case so != nil && (so.IdleTimeout < 0 || so.ContinueAfter < 0):
		return nil, fmt.Errorf("%w: SessionOptions: negative IdleTimeout or ContinueAfter", agentloop.ErrInvalidOption)
	}
	b := &serveBackend{c: c, queue: queue, base: base}
	if so != nil {
		b.so = *so
	}
	return b, nil
}

type serveBackend struct {
	c     client.Client
	queue string
	base  *agentloop.Options
	so    SessionOptions
}

// serverOwned are the Options fields serve sets itself on every session;
// the workers set the same from their own server (serve.Server.
// SessionOptions), so they do not travel with the session.
var serverOwned = []string{"Hooks", "ConfigDir", "SessionStore", "SessionStoreLeaseTTL", "Logger", "Observer", "Sandbox", "Settings",
	"Provider", "SettingSources", "StrictMCPConfig", "ConfineProjectConfig", "MCPConnector", "Resume"}

// Durable is true: turns run in workflows.
func (b *serveBackend) Durable() bool { return true }

// input is the SessionInput of a session serve opens with o.
func (b *serveBackend) input(id string, o *agentloop.Options) (SessionInput, error) {
	var trimmed agentloop.Options
	if o != nil {
		trimmed = *o
	}
	var base agentloop.Options
	if b.base != nil {
		base = *b.base
	}
	v, bv := reflect.ValueOf(&trimmed).Elem(), reflect.ValueOf(base)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if slices.Contains(carried, name) {
			continue
		}
		if slices.Contains(serverOwned, name) || reflect.DeepEqual(v.Field(i).Interface(), bv.Field(i).Interface()) {
			v.Field(i).SetZero()
		}
	}
	trimmed.SessionID = id
	in, err := inputOf("", &trimmed)
	if err != nil {
		return in, err
	}
	in.IdleTimeout, in.ContinueAfter = b.so.IdleTimeout, b.so.ContinueAfter
	in.AskClient = true // serve passes every request it is asked to its client
	return in, nil
}

// Check refuses the options a session's workflow does not carry.
func (b *serveBackend) Check(o *agentloop.Options) error {
	_, err := b.input(uuid.NewString(), o)
	return err
}

// Open attaches to the session's workflow, starting it when none runs.
func (b *serveBackend) Open(ctx context.Context, req serve.OpenRequest) (serve.Conn, error) {
	in, err := b.input(req.ID, req.Options)
	if err != nil {
		return nil, err
	}
	if err := b.ensure(ctx, in); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	conn := &serveConn{b: b, in: in, id: workflowID(req.ID), ctx: cctx, cancel: cancel, from: int(req.After),
		asked: map[string]bool{}, wake: make(chan struct{}, 1)}
	if req.Options != nil {
		conn.ask = req.Options.CanUseTool
	}
	return conn, nil
}

func workflowID(session string) string { return "agentloop-" + session }

// ensure makes sure the session's workflow runs: the one running, or a
// new one going on from where the last ended, or a new session.
func (b *serveBackend) ensure(ctx context.Context, in SessionInput) error {
	id := workflowID(in.SessionID)
	d, err := b.c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
	case err != nil:
		return fmt.Errorf("agentloop/temporal: looking the session's workflow up: %w", err)
	default:
		switch st := d.GetWorkflowExecutionInfo().GetStatus(); st {
		case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return nil
		case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
			var sum Summary
			if err := b.c.GetWorkflow(ctx, id, "").Get(ctx, &sum); err != nil {
				return fmt.Errorf("agentloop/temporal: reading how the session's last workflow ended: %w", err)
			}
			if sum.Carry == nil {
				return fmt.Errorf("agentloop/temporal: the session's last workflow ended without its conversation")
			}
			in.Carry = sum.Carry
		default:
			// Failed, terminated, cancelled or timed out: the
			// conversation went with it.
			return fmt.Errorf("agentloop/temporal: the session's workflow %s ended %s; its conversation cannot be resumed (start a new session)",
				id, strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_")))
		}
	}
	_, err = b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: b.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, WorkflowName, in)
	if err != nil {
		return fmt.Errorf("agentloop/temporal: starting the session's workflow: %w", err)
	}
	return nil
}

// Fork starts the workflow of req's session from the conversation the
// session from has now (serve forks only idle sessions): running, from
// its workflow; ended, from its result; never started, from nothing.
func (b *serveBackend) Fork(ctx context.Context, req serve.OpenRequest, from string) error {
	in, err := b.input(req.ID, req.Options)
	if err != nil {
		return err
	}
	id := workflowID(from)
	d, err := b.c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	var carry *Carry
	switch {
	case errors.As(err, &nf):
	case err != nil:
		return fmt.Errorf("agentloop/temporal: looking the forked session's workflow up: %w", err)
	case d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		v, err := b.c.QueryWorkflow(ctx, id, "", QueryConversation)
		if err == nil {
			err = v.Get(&carry)
		}
		if err != nil {
			return fmt.Errorf("agentloop/temporal: reading the forked session's conversation: %w", err)
		}
	case d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var sum Summary
		if err := b.c.GetWorkflow(ctx, id, "").Get(ctx, &sum); err != nil {
			return fmt.Errorf("agentloop/temporal: reading how the forked session's workflow ended: %w", err)
		}
		carry = sum.Carry
	default:
		return fmt.Errorf("agentloop/temporal: the forked session's workflow %s ended without its conversation", id)
	}
	if carry != nil {
		in.Carry = &Carry{History: carry.History, Model: carry.Model}
	}
	if _, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflowID(req.ID), TaskQueue: b.queue}, WorkflowName, in); err != nil {
		return fmt.Errorf("agentloop/temporal: starting the fork's workflow: %w", err)
	}
	return nil
}

// End closes the session's workflow (its turn was interrupted): it ends
// once the run, if any, is over; after 10s it is terminated.
func (b *serveBackend) End(ctx context.Context, session string) error {
	id := workflowID(session)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	h, err := b.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: UpdateClose,
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err == nil {
		err = b.c.GetWorkflow(ctx, id, "").Get(ctx, nil)
	}
	var nf *serviceerror.NotFound
	if err == nil || errors.As(err, &nf) || strings.Contains(err.Error(), "already completed") {
		return nil
	}
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer tcancel()
	if terr := b.c.TerminateWorkflow(tctx, id, "", "session deleted"); terr != nil && !errors.As(terr, &nf) {
		return fmt.Errorf("agentloop/temporal: ending the session's workflow: %w (and terminating it: %w)", err, terr)
	}
	return nil
}

// serveConn relays one session's workflow to a serve replica.
type serveConn struct {
	b      *serveBackend
	in     SessionInput
	id     string // the workflow id
	ask    func(context.Context, agentloop.PermissionRequest) (agentloop.PermissionResult, error)
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wake   chan struct{} // a prompt was sent

	mu    sync.Mutex
	from  int             // the next line to read
	queue []string        // prompts waiting for the running one's result
	busy  bool            // a prompt was sent and its result is not read yet
	asked map[string]bool // permission requests passed to ask
}

// Messages relays the workflow's lines from After on, each with its
// position (its index + 1), answering its permission requests with the
// session's CanUseTool.
func (c *serveConn) Messages(ctx context.Context) iter.Seq2[serve.Delivery, error] {
	return func(yield func(serve.Delivery, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(c.ctx, cancel)
		defer stop()
		wait := PollInterval
		for ctx.Err() == nil {
			c.mu.Lock()
			from := c.from
			c.mu.Unlock()
			v, err := c.b.c.QueryWorkflow(ctx, c.id, "", QueryEvents, from)
			var ev Events
			if err == nil {
				err = v.Get(&ev)
			}
			if err != nil {
				// No worker answers (one is taking over from another
				// that died) or the workflow ended: ask again later.
				sleepOrWake(ctx, c.wake, MaxPollInterval)
				continue
			}
			c.answer(ctx, ev.Asks)
			if ev.From > from {
				from = ev.From // lines of an earlier run, not held any more
			}
			for _, line := range ev.Lines {
				from++
				m, err := message.Decode(line)
				if err != nil {
					if !yield(serve.Delivery{}, fmt.Errorf("agentloop/temporal: message %d: %w", from, err)) {
						return
					}
					continue
				}
				c.mu.Lock()
				c.from = from
				c.mu.Unlock()
				if !yield(serve.Delivery{Message: m, Pos: int64(from)}, nil) {
					return
				}
				if _, ok := m.(*message.Result); ok {
					c.next(ctx)
				}
			}
			c.mu.Lock()
			c.from = from
			c.mu.Unlock()
			if len(ev.Lines) > 0 {
				wait = PollInterval
				continue
			}
			sleepOrWake(ctx, c.wake, wait)
			wait = min(2*wait, MaxPollInterval)
		}
	}
}

// answer passes the requests not passed yet to the session's CanUseTool,
// each on its own goroutine (the stream goes on meanwhile), and sends the
// answers to the workflow. A request whose callback gives up because the
// replica lets the session go stays unanswered, for the next replica.
func (c *serveConn) answer(ctx context.Context, asks []Ask) {
	if c.ask == nil {
		return
	}
	for _, a := range asks {
		c.mu.Lock()
		seen := c.asked[a.ID]
		c.asked[a.ID] = true
		c.mu.Unlock()
		if seen {
			continue
		}
		go func() {
			res, err := c.ask(ctx, a.Request)
			if ctx.Err() != nil || errors.Is(err, agentloop.ErrClosed) {
				return
			}
			if err != nil {
				res = agentloop.Deny(err.Error())
			}
			s := &Session{c: c.b.c, run: c.b.c.GetWorkflow(ctx, c.id, "")}
			// A refusal means another replica answered meanwhile or the
			// run ended: nothing waits for this answer any more.
			_ = s.updateResult(ctx, nil, UpdatePermission, PermissionAnswer{ID: a.ID, Result: res})
		}()
	}
}

// Send queues text: it goes to the workflow now when no prompt runs, else
// once the running one's result is read.
func (c *serveConn) Send(text string) (string, error) {
	if text == "" {
		return "", fmt.Errorf("%w: empty prompt", agentloop.ErrInvalidOption)
	}
	id := uuid.NewString()
	c.mu.Lock()
	if c.busy || len(c.queue) > 0 {
		c.queue = append(c.queue, text)
		c.mu.Unlock()
		return id, nil
	}
	c.busy = true
	c.mu.Unlock()
	err := c.prompt(c.ctx, text)
	if errors.Is(err, ErrSessionBusy) {
		// A turn runs that this replica took over: after it.
		c.mu.Lock()
		c.queue = append([]string{text}, c.queue...)
		c.mu.Unlock()
		return id, nil
	}
	if err != nil {
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
		return "", err
	}
	return id, nil
}

// next sends the first queued prompt once a run's result was read.
func (c *serveConn) next(ctx context.Context) {
	c.mu.Lock()
	c.busy = false
	if len(c.queue) == 0 {
		c.mu.Unlock()
		return
	}
	text := c.queue[0]
	c.queue = c.queue[1:]
	c.busy = true
	c.mu.Unlock()
	if err := c.prompt(ctx, text); err != nil {
		c.mu.Lock()
		if errors.Is(err, ErrSessionBusy) {
			c.queue = append([]string{text}, c.queue...)
		} else {
			c.busy = false
		}
		c.mu.Unlock()
	}
}

// prompt sends text to the workflow, starting a new one first when the
// session's ended.
func (c *serveConn) prompt(ctx context.Context, text string) error {
	s := &Session{c: c.b.c, run: c.b.c.GetWorkflow(ctx, c.id, "")}
	var from int
	err := s.updateResult(ctx, &from, UpdatePrompt, text)
	if err != nil && (strings.Contains(err.Error(), "already completed") || strings.Contains(err.Error(), "session is closed")) {
		if err = c.b.ensure(ctx, c.in); err == nil {
			err = s.updateResult(ctx, &from, UpdatePrompt, text)
		}
	}
	if err != nil {
		if strings.Contains(err.Error(), errBusyText) {
			return fmt.Errorf("%w (%w)", ErrSessionBusy, err)
		}
		return fmt.Errorf("agentloop/temporal: sending the prompt: %w", err)
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// Queued is the number of prompts waiting for the running one's result.
func (c *serveConn) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// Interrupt stops the workflow's run under way.
func (c *serveConn) Interrupt(ctx context.Context) error {
	s := &Session{c: c.b.c, run: c.b.c.GetWorkflow(ctx, c.id, "")}
	return s.update(ctx, UpdateInterrupt)
}

// SetPermissionMode changes the mode of the workflow's next decisions.
func (c *serveConn) SetPermissionMode(ctx context.Context, mode agentloop.PermissionMode) error {
	s := &Session{c: c.b.c, run: c.b.c.GetWorkflow(ctx, c.id, "")}
	return s.SetPermissionMode(ctx, mode)
}

// Close stops relaying; the workflow goes on.
func (c *serveConn) Close() error {
	c.cancel()
	return nil
}

// sleepOrWake waits d, or until wake or ctx.
func sleepOrWake(ctx context.Context, wake <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}
