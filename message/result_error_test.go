package message

import (
	"errors"
	"fmt"
	"testing"
)

// TestResultErrorIs checks every sentinel against every error result: a
// result matches exactly the sentinels of its subtype and terminal reason,
// also through wrapping.
func TestResultErrorIs(t *testing.T) {
	status := 529
	sentinels := map[string]error{
		"turns": ErrMaxTurns, "budget": ErrMaxBudget, "structured": ErrMaxStructuredOutputRetries,
		"execution": ErrDuringExecution, "api": ErrAPIError,
	}
	for _, tc := range []struct {
		name string
		r    Result
		want []string
	}{
		{"max turns", Result{Subtype: ResultErrorMaxTurns, TerminalReason: TerminalMaxTurns}, []string{"turns"}},
		{"max budget", Result{Subtype: ResultErrorMaxBudget, TerminalReason: TerminalBudgetExhausted}, []string{"budget"}},
		{"structured retries", Result{Subtype: ResultErrorMaxStructuredRetries, TerminalReason: TerminalStructuredRetry}, []string{"structured"}},
		{"aborted", Result{Subtype: ResultErrorDuringExecution, TerminalReason: TerminalAborted}, []string{"execution"}},
		{"api error during execution", Result{Subtype: ResultErrorDuringExecution, TerminalReason: TerminalAPIError}, []string{"execution", "api"}},
		{"success on an api error", Result{Subtype: ResultSuccess, IsError: true, TerminalReason: TerminalAPIError, APIErrorStatus: &status}, []string{"api"}},
	} {
		err := fmt.Errorf("wrapped: %w", &ResultError{Result: &tc.r})
		for name, sentinel := range sentinels {
			want := false
			for _, w := range tc.want {
				want = want || w == name
			}
			if got := errors.Is(err, sentinel); got != want {
				t.Errorf("%s: errors.Is(err, %v) = %v, want %v", tc.name, sentinel, got, want)
			}
		}
	}
	if errors.Is(&ResultError{}, ErrMaxTurns) {
		t.Error("a ResultError without a result matches ErrMaxTurns")
	}
}
