package engine

import (
	"context"
	"errors"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// What a host that feeds a session a stream of user messages (the Client's
// streaming input) needs of the engine beyond Run: the budget may span
// several runs, a message may join the history without a run, and a
// prompt may carry the id its sender chose.

// budgetScope is where the budget of a run counts from.
type budgetScope struct {
	// acrossRuns: the budget spans every run since it started (see
	// BudgetAcrossRuns) instead of each run on its own.
	acrossRuns bool
	// started: base holds where the current budget began; a "/clear"
	// unsets it.
	started bool
	base    float64 // the session cost when the budget began
}

// BudgetAcrossRuns makes the budget (MaxBudgetUSD, or Config.Budget for a
// top-level session) count what every run spends from the next run on,
// until a "/clear" starts it afresh, instead of what each run spends on its
// own. Once the cap is reached, every later run ends with
// error_max_budget_usd before any model call. Call it between runs; calls
// after the first change nothing.
func (s *Session) BudgetAcrossRuns() {
	if !s.budget.acrossRuns {
		s.budget.acrossRuns = true
		s.budget.started = false
	}
}

// startBudget is called as a run begins: it starts the budget (a shared
// Budget's too) unless it spans runs and has already started, and returns
// the session cost the run's budget counts from.
func (s *Session) startBudget() float64 {
	if !s.budget.acrossRuns || !s.budget.started {
		s.budget.started = true
		s.budget.base = s.CostUSD()
		if s.cfg.Budget != nil && s.cfg.Parent == nil {
			s.cfg.Budget.StartRun()
		}
	}
	return s.budget.base
}

type promptIDKey struct{}

// WithPromptID returns a context under which Run (or AppendPrompt) gives
// the prompt's user message the uuid id instead of a fresh one, so a host
// can name the message it sent.
func WithPromptID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, promptIDKey{}, id)
}

// promptID is the uuid WithPromptID put in ctx, or "".
func promptID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(promptIDKey{}).(string)
	return id
}

// ErrCallPending is returned by AppendPrompt when the history ends with a
// tool call that has no result yet (a deferred call): only a run can
// answer it.
var ErrCallPending = errors.New("engine: a tool call is waiting for its result")

// AppendPrompt adds prompt to the history and the record as a user
// message, without a run: the next request sends it with whatever comes
// after it. It is the "shouldQuery: false" of streaming input. The
// conversation's opening context goes before it when the history is
// empty, as for a run's prompt; the message's uuid is the one ctx carries
// (WithPromptID), else a fresh one. It returns the recorded message. Call
// it between runs, never during one.
func (s *Session) AppendPrompt(ctx context.Context, prompt []model.Content) (*message.User, error) {
	if len(prompt) == 0 {
		return nil, errors.New("engine: empty prompt")
	}
	if n := len(s.history); n > 0 && s.history[n-1].Role == "assistant" {
		for _, b := range s.history[n-1].Content {
			if b.Type == model.TypeToolUse {
				return nil, ErrCallPending
			}
		}
	}
	r := &run{s: s, ctx: ctx}
	return r.commitPrompt(prompt, nil), nil
}

// abortedTools ends a run cancelled while its tools ran: the reference
// tells this apart from a cancelled request with terminal_reason
// aborted_tools.
func (r *run) abortedTools(err error) ending {
	e := r.aborted(err)
	e.res.TerminalReason = message.TerminalAbortedTools
	// The reply whose calls were cut ended whole: the reference keeps
	// its stop reason (tool_use).
	if r.last != nil && r.last.StopReason != "" {
		sr := r.last.StopReason
		e.res.StopReason = &sr
	}
	return e
}
