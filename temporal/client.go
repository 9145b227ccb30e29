package temporal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
)

// PollInterval is how often Query asks the workflow for new messages, and
// QueryPatience how long it goes on asking while no worker answers.
var (
	PollInterval  = 50 * time.Millisecond
	QueryPatience = time.Minute
)

// Query runs prompt as a durable session on the workers of queue and
// returns its messages as agentloop.Query does: the same stream, ending in
// a result (and, after an error result, its error). opts carries only the
// options a SessionInput holds; anything else is ErrUnsupported (set it
// on the workers' Options). Nothing happens until the stream is consumed.
// Breaking out of the range cancels the workflow.
//
// The session id is opts.SessionID, or a new one; the workflow id is
// "agentloop-" followed by it.
func Query(ctx context.Context, c client.Client, queue, prompt string, opts *agentloop.Options) agentloop.Stream {
	return func(yield func(agentloop.Message, error) bool) {
		in, err := inputOf(prompt, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		if in.SessionID == "" {
			in.SessionID = uuid.NewString()
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "agentloop-" + in.SessionID, TaskQueue: queue},
			WorkflowName, in)
		if err != nil {
			yield(nil, fmt.Errorf("agentloop/temporal: starting the session: %w", err))
			return
		}
		finished := false
		defer func() {
			if !finished {
				_ = c.CancelWorkflow(context.WithoutCancel(ctx), run.GetID(), run.GetRunID())
			}
		}()
		var failingSince time.Time
		for from := 0; ; {
			ev, err := events(ctx, c, run, from)
			if err != nil {
				// A query fails while no worker can answer it (the one
				// holding the session died and another is taking over):
				// the messages are in the history, so ask again, for up
				// to QueryPatience.
				if failingSince.IsZero() {
					failingSince = time.Now()
				}
				if time.Since(failingSince) > QueryPatience || ctx.Err() != nil {
					yield(nil, err)
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(4 * PollInterval):
				}
				continue
			}
			failingSince = time.Time{}
			for _, line := range ev.Lines {
				from++
				m, err := message.Decode(line)
				if err != nil {
					yield(nil, fmt.Errorf("agentloop/temporal: message %d: %w", from, err))
					return
				}
				if !yield(m, nil) {
					return
				}
				if r, ok := m.(*message.Result); ok && r.IsError {
					finished = true
					yield(nil, r.Err())
					return
				}
			}
			if ev.Done && len(ev.Lines) == 0 {
				finished = true
				if ev.Err != "" {
					yield(nil, errors.New(ev.Err))
				}
				return
			}
			if len(ev.Lines) == 0 {
				select {
				case <-ctx.Done():
					yield(nil, ctx.Err())
					return
				case <-time.After(PollInterval):
				}
			}
		}
	}
}

// events asks the workflow for its messages from index from.
func events(ctx context.Context, c client.Client, run client.WorkflowRun, from int) (Events, error) {
	v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), QueryEvents, from)
	if err != nil {
		return Events{}, fmt.Errorf("agentloop/temporal: reading the session's messages: %w", err)
	}
	var ev Events
	if err := v.Get(&ev); err != nil {
		return Events{}, fmt.Errorf("agentloop/temporal: reading the session's messages: %w", err)
	}
	return ev, nil
}
