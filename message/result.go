package message

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Result subtypes.
const (
	ResultSuccess                   = "success"
	ResultErrorMaxTurns             = "error_max_turns"
	ResultErrorMaxBudget            = "error_max_budget_usd"
	ResultErrorDuringExecution      = "error_during_execution"
	ResultErrorMaxStructuredRetries = "error_max_structured_output_retries"
)

// Terminal reasons.
const (
	TerminalCompleted       = "completed"
	TerminalMaxTurns        = "max_turns"
	TerminalBudgetExhausted = "budget_exhausted"
	TerminalAPIError        = "api_error"
	TerminalAborted         = "aborted_streaming"
	TerminalAbortedTools    = "aborted_tools"
	TerminalStructuredRetry = "structured_output_retry_exhausted"
	TerminalHookStopped     = "hook_stopped"
	TerminalTurnSetupFailed = "turn_setup_failed"
	// TerminalToolDeferred ends a run whose only tool call a PreToolUse
	// hook deferred; the result's DeferredToolUse names the call.
	TerminalToolDeferred = "tool_deferred"
	// TerminalToolDeferredUnavailable ends a resumed run whose deferred
	// call names a tool the session no longer has (a failure).
	TerminalToolDeferredUnavailable = "tool_deferred_unavailable"
)

// StopToolDeferred is the stop_reason of a result whose run ended on a
// deferred tool call.
const StopToolDeferred = "tool_deferred"

// DeferredToolUse is the tool call a PreToolUse hook deferred: the call
// is pending in the session's history, without a result, until the next
// prompt of the session (or of a resumed session) re-fires PreToolUse for
// it.
type DeferredToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Result is the last message of a run.
//
// IsError is true for every error subtype and for a success result that
// ended on an API error (then Result holds the error text and
// APIErrorStatus the HTTP status).
type Result struct {
	Subtype           string                `json:"subtype"`
	IsError           bool                  `json:"is_error"`
	DurationMs        int64                 `json:"duration_ms"`
	DurationAPIMs     int64                 `json:"duration_api_ms"`
	NumTurns          int                   `json:"num_turns"`
	Result            *string               `json:"result,omitempty"`
	StopReason        *string               `json:"stop_reason"`
	SessionID         string                `json:"session_id"`
	TotalCostUSD      float64               `json:"total_cost_usd"`
	Usage             ResultUsage           `json:"usage"`
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []PermissionDenial    `json:"permission_denials"`
	Errors            []string              `json:"errors,omitempty"`
	APIErrorStatus    *int                  `json:"api_error_status,omitempty"`
	APIErrorType      string                `json:"api_error_type,omitempty"`
	TerminalReason    string                `json:"terminal_reason,omitempty"`
	StructuredOutput  json.RawMessage       `json:"structured_output,omitempty"`
	DeferredToolUse   *DeferredToolUse      `json:"deferred_tool_use,omitempty"`
	// SessionWritesLost is set when the session's transcript has lost
	// writes, in this run or an earlier one of the session: nothing after
	// the failure was recorded (agentloop's addition; the loss was also a
	// system/session_writes_lost message in the stream when it happened).
	SessionWritesLost *WritesLost `json:"session_writes_lost,omitempty"`
	// SubagentStats counts the session's subagents so far (all its runs,
	// not only this one), as the reference's result does.
	SubagentStats *SubagentStats `json:"subagent_stats,omitempty"`
	// LocalCommand is set on the result of a local slash command: its
	// canonical name with "-" written "_" (list_agents), as the
	// reference names it. Such a run makes no model call (NumTurns 0).
	LocalCommand string `json:"local_command,omitempty"`
	UUID         string `json:"uuid"`
}

// SubagentStats counts the subagents of a session, on its results: how
// many started (by how the Agent call asked: run_in_background true,
// false or left out; how many ran in the background; the deepest nesting;
// how many subagents started), how they ended (completed, failed, killed:
// by the parent that owned it, by the user's interrupt, by the system's
// budget), how many starts were refused, and the starts per subagent
// type.
type SubagentStats struct {
	Spawned             int64            `json:"spawned"`
	Requested           SubagentRequests `json:"requested"`
	StartedInBackground int64            `json:"started_in_background"`
	MaxDepth            int              `json:"max_depth"`
	SpawnedBySubagents  int64            `json:"spawned_by_subagents"`
	Completed           int64            `json:"completed"`
	Failed              int64            `json:"failed"`
	Killed              SubagentKills    `json:"killed"`
	Refused             SubagentRefusals `json:"refused"`
	ByType              map[string]int64 `json:"by_type"`
}

// SubagentRequests counts Agent calls by their run_in_background.
type SubagentRequests struct {
	Background int64 `json:"background"`
	Foreground int64 `json:"foreground"`
	Unset      int64 `json:"unset"`
}

// SubagentKills counts stopped subagents by who stopped them.
type SubagentKills struct {
	Parent int64 `json:"parent"`
	User   int64 `json:"user"`
	System int64 `json:"system"`
}

// SubagentRefusals counts subagent starts refused, by reason.
type SubagentRefusals struct {
	DepthLimit       int64 `json:"depth_limit"`
	ConcurrencyLimit int64 `json:"concurrency_limit"`
	Budget           int64 `json:"budget"`
}

// MarshalJSON writes the line with its type field.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return withType("result", (*plain)(r))
}

// Text returns the result text, or "" when there is none.
func (r *Result) Text() string {
	if r.Result == nil {
		return ""
	}
	return *r.Result
}

// Err returns nil for a successful result and a *ResultError otherwise.
func (r *Result) Err() error {
	if !r.IsError {
		return nil
	}
	return &ResultError{Result: r}
}

// ResultError is the error form of an error result: a run that ended with
// is_error set. errors.As gives access to the whole result; errors.Is
// matches it against the sentinels below, by its subtype and terminal
// reason.
type ResultError struct {
	Result *Result
}

// The sentinels a *ResultError matches with errors.Is. A result can match
// two: an API failure reported as error_during_execution is both
// ErrDuringExecution and ErrAPIError.
var (
	// ErrMaxTurns: the run reached its turn limit (error_max_turns).
	ErrMaxTurns = errors.New("maximum number of turns reached")
	// ErrMaxBudget: the run's cost reached its budget
	// (error_max_budget_usd).
	ErrMaxBudget = errors.New("maximum budget reached")
	// ErrMaxStructuredOutputRetries: the model failed to produce valid
	// structured output too often (error_max_structured_output_retries).
	ErrMaxStructuredOutputRetries = errors.New("structured output retries exhausted")
	// ErrDuringExecution: the run failed or was stopped along the way
	// (error_during_execution): an API failure, an interrupt, a hook
	// that stopped it.
	ErrDuringExecution = errors.New("error during execution")
	// ErrAPIError: the run ended on a model API error that outlived its
	// retries (terminal_reason api_error; the result's APIErrorStatus
	// holds the HTTP status, when there was one), whichever the subtype.
	ErrAPIError = errors.New("model API error")
)

func (e *ResultError) Error() string {
	r := e.Result
	detail := strings.Join(r.Errors, "; ")
	if detail == "" {
		detail = r.Text()
	}
	if detail == "" {
		detail = r.TerminalReason
	}
	return fmt.Sprintf("agent run ended with %s: %s", r.Subtype, detail)
}

// Is reports whether target is the sentinel of the result's subtype or
// terminal reason; see ErrMaxTurns and those that follow it.
func (e *ResultError) Is(target error) bool {
	if e == nil || e.Result == nil {
		return false
	}
	r := e.Result
	switch target {
	case ErrMaxTurns:
		return r.Subtype == ResultErrorMaxTurns
	case ErrMaxBudget:
		return r.Subtype == ResultErrorMaxBudget
	case ErrMaxStructuredOutputRetries:
		return r.Subtype == ResultErrorMaxStructuredRetries
	case ErrDuringExecution:
		return r.Subtype == ResultErrorDuringExecution
	case ErrAPIError:
		return r.TerminalReason == TerminalAPIError || r.APIErrorStatus != nil
	}
	return false
}

// ResultUsage is the token usage of the run's main loop.
type ResultUsage struct {
	InputTokens              int64               `json:"input_tokens"`
	CacheCreationInputTokens int64               `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64               `json:"cache_read_input_tokens"`
	OutputTokens             int64               `json:"output_tokens"`
	OutputTokensDetails      OutputTokensDetails `json:"output_tokens_details"`
	ServerToolUse            ServerToolUse       `json:"server_tool_use"`
	ServiceTier              string              `json:"service_tier"`
	CacheCreation            CacheCreation       `json:"cache_creation"`
	InferenceGeo             string              `json:"inference_geo"`
	Iterations               []json.RawMessage   `json:"iterations"`
	Speed                    string              `json:"speed"`
}

// OutputTokensDetails splits output tokens.
type OutputTokensDetails struct {
	ThinkingTokens int64 `json:"thinking_tokens"`
}

// ServerToolUse counts server-side tool requests.
type ServerToolUse struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests"`
}

// CacheCreation splits cache writes by time to live.
type CacheCreation struct {
	Ephemeral1hInputTokens int64 `json:"ephemeral_1h_input_tokens"`
	Ephemeral5mInputTokens int64 `json:"ephemeral_5m_input_tokens"`
}

// ModelUsage is the usage and cost of one model over the run, subagents
// included.
type ModelUsage struct {
	InputTokens                        int64   `json:"inputTokens"`
	OutputTokens                       int64   `json:"outputTokens"`
	CacheReadInputTokens               int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens           int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests                  int64   `json:"webSearchRequests"`
	CostUSD                            float64 `json:"costUSD"`
	ContextWindow                      int64   `json:"contextWindow"`
	MaxOutputTokens                    int64   `json:"maxOutputTokens"`
	ThinkingTokens                     int64   `json:"thinkingTokens"`
	CacheCreationEphemeral5mInputToken int64   `json:"cacheCreationEphemeral5mInputTokens"`
	CacheCreationEphemeral1hInputToken int64   `json:"cacheCreationEphemeral1hInputTokens"`
	CanonicalModel                     string  `json:"canonicalModel,omitempty"`
	Provider                           string  `json:"provider,omitempty"`
	CostBasis                          string  `json:"costBasis,omitempty"`
	// CostUnknown is set when the model has no price (not in the table,
	// not in modelPricing): CostUSD is 0 and does not say what the calls
	// cost (agentloop's addition; CostBasis is "unknown" too).
	CostUnknown bool `json:"costUnknown,omitempty"`
}

// PermissionDenial is one tool call that was not allowed to run.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}
