package agentloop

import (
	"fmt"
	"strings"
)

// TaskBudget is the token budget of a whole task, told to the model so
// that it can pace its work (Options.TaskBudget). The API enforces
// nothing with it; MaxBudgetUSD and MaxTurns are the hard limits.
type TaskBudget struct {
	// Total is the budget in tokens; it must be positive.
	Total int `json:"total"`
}

// checkNewOptions checks Betas, TaskBudget, EmptySystemPrompt, Agent and
// ResumeSessionAt/ResumeDropsTurn on their own (the agent's name and the
// entry's uuid are checked once the session knows its agents and its
// transcript).
func (o *Options) checkNewOptions() error {
	for _, b := range o.Betas {
		if strings.TrimSpace(b) == "" || strings.ContainsAny(b, ",\r\n") {
			return fmt.Errorf("%w: beta %q: want a single non-empty name", ErrInvalidOption, b)
		}
	}
	if o.TaskBudget != nil && o.TaskBudget.Total <= 0 {
		return fmt.Errorf("%w: TaskBudget.Total %d must be positive", ErrInvalidOption, o.TaskBudget.Total)
	}
	if o.EmptySystemPrompt && o.SystemPrompt != "" {
		return fmt.Errorf("%w: EmptySystemPrompt and SystemPrompt contradict each other", ErrInvalidOption)
	}
	if o.ResumeSessionAt != "" && o.Resume == "" {
		return fmt.Errorf("%w: ResumeSessionAt needs Resume", ErrInvalidOption)
	}
	if o.ResumeDropsTurn != "" && o.ResumeSessionAt == "" {
		return fmt.Errorf("%w: ResumeDropsTurn needs ResumeSessionAt", ErrInvalidOption)
	}
	return nil
}

// taskBudgetTokens is the engine's form of Options.TaskBudget.
func taskBudgetTokens(b *TaskBudget) int {
	if b == nil {
		return 0
	}
	return b.Total
}
