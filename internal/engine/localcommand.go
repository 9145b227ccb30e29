package engine

import (
	"strings"

	"github.com/agentloop/agentloop/internal/compact"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// A local slash command (/context, /model, /usage, …) runs in the host
// program, not in the model: Config.LocalCommand runs it and returns
// what it printed. As the reference does, the run then makes no model
// call: the command, its arguments and its output join the history as a
// user turn (the model sees on its next request that the user ran it,
// under the caveat that it was not a message to the model), the output
// reaches the stream as an assistant message of model
// message.SyntheticModel carrying LocalCommandSource and
// LocalCommandRun, and the run ends with a success result whose text is
// the output, with no turns, no stop reason and LocalCommand set.

// LocalOutput is what a local command did.
type LocalOutput struct {
	// Name is the command's canonical name, without its slash (an alias
	// resolved); Args its arguments as typed.
	Name, Args string
	// Text is what the command printed.
	Text string
	// Before are messages to emit before the output (a
	// session_title_changed, say); they do not enter the history.
	Before []message.Message
}

// localCommand runs the prompt as a local command when
// Config.LocalCommand takes it; ok is false for any other prompt.
func (r *run) localCommand(prompt []model.Content) (ending, bool) {
	lc := r.s.cfg.LocalCommand
	if lc == nil || len(prompt) != 1 || prompt[0].Type != model.TypeText {
		return ending{}, false
	}
	out, ok := lc(r.ctx, prompt[0].Text)
	if !ok {
		return ending{}, false
	}
	r.numTurns = 0
	for _, m := range out.Before {
		if !r.send(m) {
			return ending{err: ErrStopped}, true
		}
	}
	rec := compact.LocalCommandRecord(out.Name, out.Args, out.Text)
	r.commitUser(rec, r.userMessage(rec, false))
	stop := "end_turn"
	shown := &message.Assistant{
		Message: message.APIMessage{ID: r.s.cfg.NewID(), Type: "message", Role: "assistant", Model: message.SyntheticModel,
			Content: []model.Content{model.TextBlock(out.Text)}, StopReason: &stop},
		ParentToolUseID:    r.s.cfg.ParentToolUseID,
		SessionID:          r.s.cfg.Env.SessionID,
		UUID:               r.s.cfg.NewID(),
		Timestamp:          r.timestamp(),
		LocalCommandSource: compact.LocalStdout(out.Text),
		LocalCommandRun:    &message.LocalCommandRun{Command: out.Name, Args: out.Args},
	}
	if !r.send(shown) {
		return ending{err: ErrStopped}, true
	}
	res := r.base(message.ResultSuccess, false)
	res.NumTurns = 0
	res.Result = &out.Text
	res.StopReason = nil
	res.LocalCommand = strings.ReplaceAll(out.Name, "-", "_")
	return finish(res), true
}
