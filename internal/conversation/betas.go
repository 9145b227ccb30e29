package conversation

import (
	"fmt"
	"strings"
)

// TaskBudget is agentloop.TaskBudget as the session reads it; the fields are
// documented there.
type TaskBudget struct {
	Total int `json:"total"`
}

// checkNewOptions checks Betas, TaskBudget, EmptySystemPrompt, Agent and
// ResumeSessionAt/ResumeDropsTurn on their own (the agent's name and the
// entry's uuid are checked once the session knows its agents and its
// transcript).
func (o *Config) checkNewOptions() error {
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
