package conversation

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// Stream is the message stream of one run. Range over it to drive the run;
// it runs once, the first time it is ranged over (or Result or Collect is
// called), and breaking out of the range cancels it. Ranging over it again
// yields only ErrStreamUsed.
type Stream iter.Seq2[Message, error]

// ErrStreamUsed is yielded by a Stream that was already consumed.
var ErrStreamUsed = errors.New("agentloop: stream already consumed")

// Query runs prompt through the agent loop with opts (nil means defaults)
// and returns the stream of its messages. Nothing happens until the stream
// is consumed. ctx bounds the whole run.
//
// When the run ends in an error result, the stream yields that result and
// then a *ResultError wrapping it.
func Query(ctx context.Context, prompt string, opts *Config) Stream {
	var used atomic.Bool
	return func(yield func(Message, error) bool) {
		if used.Swap(true) {
			yield(nil, ErrStreamUsed)
			return
		}
		sess, err := newSessionContext(ctx, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		defer sess.close()
		runTurn(ctx, sess, prompt, yield)
	}
}

// runTurn takes one prompt through the session, yielding init, the run's
// messages and, after an error result, its error. The engine records the
// conversation into the transcript (session.record) on its own, so what a
// consumer that stops reading did not see is still written.
func runTurn(ctx context.Context, sess *session, prompt string, yield func(Message, error) bool) {
	if prompt == "" {
		prompt = sess.initialPrompt() // the main-thread agent's (agent_main.go)
	}
	runContent(ctx, sess, []model.Content{model.TextBlock(prompt)}, yield)
}

// runContent is runTurn for a prompt of content blocks (text, images,
// documents), as streaming input sends them (client_stream.go).
func runContent(ctx context.Context, sess *session, prompt []model.Content, yield func(Message, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sess.retryMCP() // failed MCP servers reconnect in the background (mcp_policy.go)
	if !yield(sess.initMessage(), nil) {
		return
	}
	if n := sess.sandboxNotice(); n != nil && !yield(n, nil) {
		return
	}
	for _, m := range sess.diag.Take(sess.eng.Notify) {
		if !yield(m, nil) {
			return
		}
	}
	if r := sess.resumeRejection(); r != nil { // resume_at.go
		if yield(r, nil) {
			yield(nil, r.Err())
		}
		return
	}
	sess.transcript.begin(time.Now())
	defer sess.endCommandTurn() // a file command's model and rules last for its run (command_hooks.go)
	res, err := sess.eng.Run(ctx, prompt, func(m message.Message) bool {
		if r, ok := m.(*message.Result); ok { // the store catches up first (persist.go)
			// Even when ctx is cancelled (an interrupt, a closed Client):
			// the run's last lines must reach the store, and settle
			// bounds its own wait.
			for _, n := range sess.settle(context.WithoutCancel(ctx), r) {
				if !yield(n, nil) {
					return false
				}
			}
		}
		return yield(m, nil)
	})
	switch {
	case errors.Is(err, engine.ErrStopped):
		return
	case err != nil:
		yield(nil, fmt.Errorf("agentloop: run stopped: %w", err))
	case res != nil && res.IsError:
		yield(nil, res.Err())
	}
}
