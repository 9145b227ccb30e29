package conversation

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/subagent"
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
		sess, err := newSession(ctx, opts, true)
		if err != nil {
			yield(nil, err)
			return
		}
		defer sess.Close()
		runTurn(ctx, sess, prompt, yield)
	}
}

// runTurn takes one prompt through the session (see Session.Run); an
// empty prompt is the main-thread agent's initial prompt (agent_main.go).
func runTurn(ctx context.Context, sess *Session, prompt string, yield func(Message, error) bool) {
	if prompt == "" {
		prompt = sess.initialPrompt()
	}
	sess.Run(ctx, textPrompt(prompt), yield)
}

// textPrompt is a prompt of one text block. Not inlined: the block would
// take its 240 bytes in the frame of runTurn, under every turn of the run.
//
//go:noinline
func textPrompt(text string) []model.Content {
	return []model.Content{model.TextBlock(text)}
}

// Run takes one prompt of content blocks (text, images, documents)
// through the loop, yielding init, the run's messages and, after an error
// result, its error; it returns when the run ends or yield returns false
// (which cancels the run). A prompt that is a slash command ("/compact",
// "/clear", a file command, a skill) runs that command. The engine
// records the conversation into the transcript and the store on its own,
// so what a consumer that stops reading did not see is still written.
//
// One Run at a time: the caller (Query, Client) serialises them. ctx
// bounds the run.
func (s *Session) Run(ctx context.Context, prompt []model.Content, yield func(Message, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	locked, ok := s.beginRun(yield)
	if locked {
		defer func() { s.transcript.release() }()
	}
	if !ok {
		return
	}
	defer s.endCommandTurn() // a file command's model and rules last for its run (command_hooks.go)
	res, err := s.engine().Run(ctx, prompt, func(m message.Message) bool {
		if r, ok := m.(*message.Result); ok { // the store catches up first (persist.go)
			r.SubagentStats = subagent.StatsFor(s.env).Snapshot()
			// Even when ctx is cancelled (an interrupt, a closed Client):
			// the run's last lines must reach the store, and settle
			// bounds its own wait.
			for _, n := range s.settle(context.WithoutCancel(ctx), r) {
				if !yield(n, nil) {
					return false
				}
			}
		}
		return yield(m, nil)
	})
	endRun(res, err, yield)
}

// beginRun readies the session for a run and yields what comes before its
// first turn: init, the sandbox's notice, diagnostics. locked reports that
// the transcript's lock was taken (the caller releases it when the run
// ends); ok that the run goes on. It and endRun are not inlined, so that
// Run's frame, under every turn of the run, stays small (see engine's
// streamOnce).
//
//go:noinline
func (s *Session) beginRun(yield func(Message, error) bool) (locked, ok bool) {
	s.engine() // made at the first run of an idle session (engine_lazy.go)
	if err := s.engineErr(); err != nil {
		yield(nil, err)
		return false, false
	}
	// The transcript's file and lock first (persist.go): a run that cannot
	// write its transcript, or whose session another process is writing,
	// fails before it starts, as a session that cannot start does. They go
	// at the end of the run: the transcript /clear started, if it did.
	if err := s.transcript.lock(); err != nil {
		yield(nil, err)
		return false, false
	}
	s.retryMCP() // failed MCP servers reconnect in the background (mcp_glue.go)
	if !yield(s.initMessage(), nil) {
		return true, false
	}
	if n := s.sandboxNotice(); n != nil && !yield(n, nil) {
		return true, false
	}
	for _, m := range s.diag.Take(s.engine().Notify) {
		if !yield(m, nil) {
			return true, false
		}
	}
	if r := s.resumeRejection(); r != nil { // resume_at.go
		if yield(r, nil) {
			yield(nil, r.Err())
		}
		return true, false
	}
	if err := s.transcript.begin(time.Now()); err != nil { // persist.go
		yield(nil, err)
		return true, false
	}
	if s.checker != nil {
		s.checker.Prepare() // here, not under the first tool call (see Prepare)
	}
	return true, true
}

// endRun yields the error that ended a run, if any: err from the engine,
// or the error of res, an error result.
//
//go:noinline
func endRun(res *message.Result, err error, yield func(Message, error) bool) {
	switch {
	case errors.Is(err, engine.ErrStopped):
		return
	case err != nil:
		yield(nil, fmt.Errorf("agentloop: run stopped: %w", err))
	case res != nil && res.IsError:
		yield(nil, res.Err())
	}
}

// Clear ends the conversation and starts a new one, as "/clear" does:
// SessionEnd (reason clear) and SessionStart (source clear) hooks run, the
// session gets a new id (see ID) and transcript, and its history is empty.
// It yields what Run yields for that command.
func (s *Session) Clear(ctx context.Context, yield func(Message, error) bool) {
	s.Run(ctx, []model.Content{model.TextBlock("/clear")}, yield)
}

// Compact summarises the conversation so far and goes on from the
// summary, as "/compact" does; instructions, when not empty, tell the
// summary what to keep. It yields what Run yields for that command,
// compact_boundary included.
func (s *Session) Compact(ctx context.Context, instructions string, yield func(Message, error) bool) {
	cmd := "/compact"
	if instructions != "" {
		cmd += " " + instructions
	}
	s.Run(ctx, []model.Content{model.TextBlock(cmd)}, yield)
}
