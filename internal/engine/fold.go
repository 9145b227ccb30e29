package engine

import (
	"context"

	"github.com/agentloop/agentloop/model"
)

// Folding: a host that feeds a session a stream of user messages (the
// Client's streaming input) may let the run in progress take the messages
// sent while it works, instead of running each as a run of its own. Between
// tool rounds (once a reply's tool results are committed, before the next
// request of the same run) the run asks the host for them, one at a time,
// through the Fold that ctx carries (WithFold). Each message taken
//
//   - goes through PromptSubmit, as a run's prompt does: a halt ends the
//     run (the message is dropped, as a halted prompt is), a block drops
//     the message (Fold.Blocked hears of it) and the run goes on;
//   - joins the user turn of the tool results, after them (the API wants
//     tool_result blocks first), followed by the context hooks added;
//   - is recorded as a user line with its id, so a transcript read back
//     gives the same history, and emitted as a user message with that id,
//     so the host sees it was taken; it counts as a turn (NumTurns).
//
// The assistant messages of the next reply name the folded ids
// (message.Assistant.UserMessageUUIDs). The run's turn count for MaxTurns
// goes on: folding is part of the run, not a new one.

// MaxFolded bounds the messages folded between two requests of a run, as
// the reference bounds user_message_uuids.
const MaxFolded = 64

// FoldedPrompt is a user message a host hands the running run.
type FoldedPrompt struct {
	// ID is the uuid of its user line; empty means a fresh one.
	ID     string
	Blocks []model.Content
}

// Fold is how a run takes the host's queued messages.
type Fold struct {
	// Take removes the next message that may fold from the host's queue
	// and returns it; ok false means there is none (now), and the run
	// stops asking until the next tool round. It runs on the loop's
	// goroutine, at most MaxFolded times in a row.
	Take func() (p FoldedPrompt, ok bool)
	// Blocked, when set, is told of a taken message that PromptSubmit
	// blocked: it was dropped and is in neither history nor record.
	Blocked func(id, reason string)
}

type foldKey struct{}

// WithFold returns a context under which Run folds the messages f hands it
// into the run between tool rounds (see Fold). Only a top-level session
// folds: a subagent's run, whose context comes from a tool of the parent,
// ignores it.
func WithFold(ctx context.Context, f Fold) context.Context {
	return context.WithValue(ctx, foldKey{}, f)
}

// foldFrom is the Fold of ctx; ok is false when there is none.
func foldFrom(ctx context.Context) (Fold, bool) {
	if ctx == nil {
		return Fold{}, false
	}
	f, ok := ctx.Value(foldKey{}).(Fold)
	return f, ok && f.Take != nil
}

// foldQueued folds the host's queued messages into the run after a tool
// round (r.afterTools); it does nothing at any other step. It reports an
// ending when the run must stop: a PromptSubmit halt, or the consumer gone.
func (r *run) foldQueued() (ending, bool) {
	if !r.afterTools {
		return ending{}, false
	}
	r.afterTools = false
	f, ok := foldFrom(r.ctx)
	if !ok || r.s.cfg.ParentToolUseID != nil || r.s.cfg.Parent != nil {
		return ending{}, false
	}
	for n := 0; n < MaxFolded && r.ctx.Err() == nil; n++ {
		p, ok := f.Take()
		if !ok {
			break
		}
		if len(p.Blocks) == 0 {
			continue
		}
		prompt, context, v := r.promptVerdict(p.Blocks)
		switch {
		case v.Halt != nil:
			return finish(r.haltResult(v.Halt)), true
		case v.Blocked:
			if f.Blocked != nil {
				f.Blocked(p.ID, v.Reason)
			}
			continue
		}
		pm := r.commitPromptAs(p.ID, prompt, context)
		r.folded = append(r.folded, pm.UUID)
		r.numTurns++
		if !r.send(pm) {
			return ending{err: ErrStopped}, true
		}
	}
	return ending{}, false
}

// foldedIDs are the ids the assistant messages of the reply being streamed
// carry: the messages folded since the last reply.
func (r *run) foldedIDs() []string {
	if len(r.folded) == 0 {
		return nil
	}
	return append([]string(nil), r.folded...)
}
