package engine

import (
	"fmt"

	"github.com/agentloop/agentloop/message"
)

// The rules that end a run between steps of a turn, as data: each is
// checked alone, in the order of its list, and the first that holds ends
// the run with the ending it returns. The loop (loop, in engine.go) calls
// beforeCallRules before each model call and afterToolsRules once a
// reply's tool calls have run; the ends that belong to one step (a failed
// call, a final reply, a dispatch the consumer left) stay in that step.

// A stopRule is one condition that ends the run.
type stopRule struct {
	name  string
	check func(r *run) (ending, bool)
}

// beforeCallRules are checked before each model call.
var beforeCallRules = []stopRule{
	{"cancelled", func(r *run) (ending, bool) {
		if err := r.ctx.Err(); err != nil {
			return r.aborted(err), true
		}
		return ending{}, false
	}},
	// Spent by tools since the last reply: subagents, helpers.
	{"max budget", func(r *run) (ending, bool) {
		if !r.overBudget() {
			return ending{}, false
		}
		return finish(r.errorResult(message.ResultErrorMaxBudget, message.TerminalBudgetExhausted,
			fmt.Sprintf("Reached maximum budget ($%s)", formatUSD(r.budgetCap())), false)), true
	}},
}

// afterToolsRules are checked once the calls of a reply have run.
var afterToolsRules = []stopRule{
	{"deferred call", func(r *run) (ending, bool) {
		if r.deferred == nil {
			return ending{}, false
		}
		return finish(r.deferredResult()), true
	}},
	{"hook halt", func(r *run) (ending, bool) {
		if r.halt == nil {
			return ending{}, false
		}
		return unrunBecause(r.haltResult(r.halt), haltUnrun), true
	}},
	{"structured output given", func(r *run) (ending, bool) {
		if r.s.cfg.OutputSchema == nil || r.structured.output == nil {
			return ending{}, false
		}
		return finish(r.structuredResult()), true
	}},
	{"structured output retries", func(r *run) (ending, bool) {
		if r.s.cfg.OutputSchema == nil || r.structured.failures <= r.s.maxStructuredRetries() {
			return ending{}, false
		}
		return finish(r.structuredExhausted()), true
	}},
	{"max turns", func(r *run) (ending, bool) {
		if max := r.s.cfg.MaxTurns; max <= 0 || r.rounds < max {
			return ending{}, false
		}
		return finish(r.errorResult(message.ResultErrorMaxTurns, message.TerminalMaxTurns,
			fmt.Sprintf("Reached maximum number of turns (%d)", r.s.cfg.MaxTurns), true)), true
	}},
}

// firstStop checks rules in order and returns the ending of the first
// that holds.
func (r *run) firstStop(rules []stopRule) (ending, bool) {
	for _, rule := range rules {
		if e, stop := rule.check(r); stop {
			return e, true
		}
	}
	return ending{}, false
}
