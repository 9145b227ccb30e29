package conversation

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
)

// Folding queued messages into the running turn (see Client.Send and
// docs/design.md, "Streaming input"). Between tool rounds the running turn
// takes, from the head of the queue, the messages that may fold, and stops
// at the first that may not, so that the queue's order holds. A message
// may fold when it has priority next, asks for a model call (ShouldQuery
// nil or true) and is not a slash command. The others keep their place
// and run as turns of their own:
//
//   - priority now interrupts the turn anyway, and runs after it;
//   - priority later waits, by its promise, for every now and next one,
//     and so for the end of the turn;
//   - ShouldQuery false joins the history without a model call, which a
//     fold would make;
//   - a slash command ("/compact", "/clear", a file command, a skill) runs
//     as a Query prompt would, which only a turn of its own can do.

// foldable reports whether m may join a running turn.
func (m queued) foldable() bool {
	return m.rank == 1 && m.query && !slashCommand(m.blocks)
}

// slashCommand reports whether blocks would be taken for a slash command:
// a single text whose first non-blank character is "/". It errs on the
// side of a command (an unknown "/word" is not folded either).
func slashCommand(blocks []model.Content) bool {
	return len(blocks) == 1 && blocks[0].Type == model.TypeText &&
		strings.HasPrefix(strings.TrimLeft(blocks[0].Text, " \t\r\n"), "/")
}

// takeFoldable removes the message at the head of the queue when it may
// fold into the running turn t, and returns it. Once t is no longer the
// running turn, or its context has ended, nothing folds.
func (in *inbox) takeFoldable(t *turn) (engine.FoldedPrompt, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.running != t || len(in.q) == 0 || !in.q[0].foldable() {
		return engine.FoldedPrompt{}, false
	}
	m := in.q[0]
	in.q = in.q[1:]
	return engine.FoldedPrompt{ID: m.id, Blocks: m.blocks}, true
}

// withFold lets the run of turn t, under ctx, fold queued messages.
func (c *Client) withFold(ctx context.Context, t *turn) context.Context {
	return engine.WithFold(ctx, engine.Fold{
		Take: func() (engine.FoldedPrompt, bool) { return c.in.takeFoldable(t) },
		Blocked: func(id, reason string) {
			c.sess.diag.Add(DiagHookMessage, fmt.Sprintf(
				"UserPromptSubmit blocked the queued message %s as it joined the running turn; it was dropped: %s", id, reason))
		},
	})
}
