package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// base fills the fields every result carries.
func (r *run) base(subtype string, isError bool) *message.Result {
	s := r.s
	res := &message.Result{
		Subtype:           subtype,
		IsError:           isError,
		DurationMs:        s.cfg.Now().Sub(r.start).Milliseconds(),
		DurationAPIMs:     r.apiTime.Milliseconds(),
		NumTurns:          r.numTurns,
		SessionID:         s.cfg.Env.SessionID,
		PermissionDenials: append([]message.PermissionDenial{}, r.denials...),
		UUID:              s.cfg.NewID(),
	}
	res.TotalCostUSD, res.ModelUsage = s.snapshot()
	res.Usage = resultUsage(r.usage)
	if r.last != nil && r.last.StopReason != "" {
		sr := r.last.StopReason
		res.StopReason = &sr
	}
	return res
}

func (s *Session) snapshot() (float64, map[string]message.ModelUsage) {
	s.totals.mu.Lock()
	defer s.totals.mu.Unlock()
	mu := make(map[string]message.ModelUsage, len(s.totals.models))
	for _, m := range s.totals.models {
		mu[m.id] = *m.usage
	}
	return s.totals.cost, mu
}

func resultUsage(u model.Usage) message.ResultUsage {
	ru := message.ResultUsage{
		InputTokens:              u.InputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
		OutputTokens:             u.OutputTokens,
		ServiceTier:              "standard",
		Iterations:               []json.RawMessage{},
		Speed:                    "standard",
	}
	if u.CacheCreation != nil {
		ru.CacheCreation.Ephemeral1hInputTokens = u.CacheCreation.Ephemeral1hInputTokens
		ru.CacheCreation.Ephemeral5mInputTokens = u.CacheCreation.Ephemeral5mInputTokens
	}
	if u.ServerToolUse != nil {
		ru.ServerToolUse.WebSearchRequests = u.ServerToolUse.WebSearchRequests
		ru.ServerToolUse.WebFetchRequests = u.ServerToolUse.WebFetchRequests
	}
	if u.ServiceTier != "" {
		ru.ServiceTier = u.ServiceTier
	}
	ru.InferenceGeo = u.InferenceGeo
	return ru
}

func (r *run) successResult() *message.Result {
	res := r.base(message.ResultSuccess, false)
	text := ""
	if r.last != nil {
		text = r.last.Text()
	}
	res.Result = &text
	res.TerminalReason = message.TerminalCompleted
	return res
}

// errorResult is an error_* result. keepUsage is false for the budget
// result, whose usage omits the reply that crossed the cap.
func (r *run) errorResult(subtype, terminal, errText string, keepUsage bool) *message.Result {
	res := r.base(subtype, true)
	res.Errors = []string{errText}
	res.TerminalReason = terminal
	if subtype == message.ResultErrorMaxBudget {
		res.StopReason = nil
	}
	if !keepUsage {
		res.Usage = resultUsage(model.Usage{})
	}
	return res
}

// apiFailure ends the run on a model call that failed after its retries: a
// synthetic assistant message states the error, and the result is a
// success result with is_error set, as the reference reports API errors.
// Failures that are not API errors end in error_during_execution.
func (r *run) apiFailure(err error) ending {
	var apiErr *model.APIError
	if !errors.As(err, &apiErr) {
		res := r.base(message.ResultErrorDuringExecution, true)
		res.Errors = []string{err.Error()}
		res.TerminalReason = message.TerminalAPIError
		res.StopReason = nil
		return finish(res)
	}
	text := apiErrorText(apiErr)
	stop := "stop_sequence"
	empty := ""
	// The synthetic message is recorded (the transcript shows the error)
	// but is no part of the history: a transcript read back skips it.
	synthetic := &message.Assistant{
		Message: message.APIMessage{
			ID: r.s.cfg.NewID(), Type: "message", Role: "assistant", Model: "<synthetic>",
			Content: []model.Content{model.TextBlock(text)}, StopReason: &stop, StopSequence: &empty,
			ContextManagement: nullJSON,
		},
		ParentToolUseID: r.s.cfg.ParentToolUseID, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), Timestamp: r.timestamp(), RequestID: apiErr.RequestID,
		Error: apiErr.Kind(), IsAPIErrorMessage: true, APIErrorStatus: apiErr.Status, APIErrorType: apiErr.Type,
	}
	r.record(synthetic)
	if !r.send(synthetic) {
		return ending{err: ErrStopped}
	}
	res := r.base(message.ResultSuccess, true)
	res.Result = &text
	res.StopReason = &stop
	res.TerminalReason = message.TerminalAPIError
	if apiErr.Status != 0 {
		st := apiErr.Status
		res.APIErrorStatus = &st
	}
	res.APIErrorType = apiErr.Type
	return finish(res)
}

// apiErrorText is the text shown for an API failure. Server errors and
// overload keep the reference's wording, which hosts match on; the rest
// name the status and the API's own message.
func apiErrorText(e *model.APIError) string {
	where := ""
	if e.Endpoint != "" {
		where = " If it persists, check your inference gateway (" + e.Endpoint + ")."
	}
	switch {
	case e.Status == 401:
		return fmt.Sprintf("API Error: 401 %s · check ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN", orDefault(e.Message, "invalid credentials"))
	case e.Kind() == "overloaded":
		return "API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment." + where
	case e.Status >= 500:
		return fmt.Sprintf("API Error: %d %s. This is a server-side issue, usually temporary — try again in a moment.%s",
			e.Status, strings.TrimSuffix(orDefault(e.Message, "Internal server error"), "."), where)
	case e.Status != 0:
		return fmt.Sprintf("API Error: %d %s", e.Status, orDefault(e.Message, e.Type))
	default:
		return "API Error: " + e.Error()
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// aborted ends a run whose context was cancelled. The error names the
// cancellation's cause when it has one (context.WithCancelCause).
func (r *run) aborted(err error) ending {
	if cause := context.Cause(r.ctx); cause != nil && cause != err {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	res := r.base(message.ResultErrorDuringExecution, true)
	res.Errors = []string{"The run was cancelled: " + err.Error()}
	res.TerminalReason = message.TerminalAborted
	res.StopReason = nil
	return ending{res: res, err: err, interrupted: true}
}
