package model

import (
	"errors"
	"fmt"
)

// Usage is the token usage of one reply, or a sum of several. Its JSON is the
// API's usage object.
type Usage struct {
	InputTokens              int64          `json:"input_tokens"`
	OutputTokens             int64          `json:"output_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	ServerToolUse            *ServerToolUse `json:"server_tool_use,omitempty"`
	ServiceTier              string         `json:"service_tier,omitempty"`
	InferenceGeo             string         `json:"inference_geo,omitempty"`
}

// CacheCreation splits cache writes by time to live.
type CacheCreation struct {
	Ephemeral1hInputTokens int64 `json:"ephemeral_1h_input_tokens"`
	Ephemeral5mInputTokens int64 `json:"ephemeral_5m_input_tokens"`
}

// ServerToolUse counts server-side tool requests.
type ServerToolUse struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CacheCreationInputTokens += v.CacheCreationInputTokens
	u.CacheReadInputTokens += v.CacheReadInputTokens
	if v.CacheCreation != nil {
		cc := CacheCreation{}
		if u.CacheCreation != nil {
			cc = *u.CacheCreation
		}
		cc.Ephemeral1hInputTokens += v.CacheCreation.Ephemeral1hInputTokens
		cc.Ephemeral5mInputTokens += v.CacheCreation.Ephemeral5mInputTokens
		u.CacheCreation = &cc
	}
	if v.ServerToolUse != nil {
		st := ServerToolUse{}
		if u.ServerToolUse != nil {
			st = *u.ServerToolUse
		}
		st.WebSearchRequests += v.ServerToolUse.WebSearchRequests
		st.WebFetchRequests += v.ServerToolUse.WebFetchRequests
		u.ServerToolUse = &st
	}
	if v.ServiceTier != "" {
		u.ServiceTier = v.ServiceTier
	}
	if v.InferenceGeo != "" {
		u.InferenceGeo = v.InferenceGeo
	}
	return u
}

// OneHourCacheTokens returns the cache-write tokens with a one-hour TTL.
func (u Usage) OneHourCacheTokens() int64 {
	if u.CacheCreation == nil {
		return 0
	}
	return u.CacheCreation.Ephemeral1hInputTokens
}

// WebSearches returns the number of server-side web searches.
func (u Usage) WebSearches() int64 {
	if u.ServerToolUse == nil {
		return 0
	}
	return u.ServerToolUse.WebSearchRequests
}

// PromptTokens is the size of the prompt: input plus cache reads and writes.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// ErrMalformedStream reports a reply the provider could not make sense of: bad
// JSON, an event out of order, a stream that ended early.
var ErrMalformedStream = errors.New("malformed response stream")

// APIError is an error response from the model API, after any retries.
type APIError struct {
	Status  int    // HTTP status; 0 for an error event in a stream
	Type    string // error type, e.g. overloaded_error
	Message string // the API's message
	// Retries is the number of retries made before giving up.
	Retries int
	// RequestID is the request-id header of the failed response, if any.
	RequestID string
	// Err is an underlying transport error, if any.
	Err error
	// Endpoint is the host (and port) the request went to, for messages
	// that tell a person where to look.
	Endpoint string
}

func (e *APIError) Error() string {
	if e.Status == 0 && e.Err != nil {
		return fmt.Sprintf("API connection error: %v", e.Err)
	}
	if e.Status == 0 {
		return fmt.Sprintf("API stream error: %s: %s", e.Type, e.Message)
	}
	return fmt.Sprintf("API error %d %s: %s", e.Status, e.Type, e.Message)
}

func (e *APIError) Unwrap() error { return e.Err }

// Kind names the failure as the stream-json protocol does:
// authentication_failed, rate_limit, overloaded, server_error,
// invalid_request, model_not_found, billing_error or unknown.
func (e *APIError) Kind() string {
	switch {
	case e.Status == 401 || e.Type == "authentication_error":
		return "authentication_failed"
	case e.Status == 402 || e.Type == "billing_error":
		return "billing_error"
	case e.Status == 429 || e.Type == "rate_limit_error":
		return "rate_limit"
	case e.Status == 529 || e.Type == "overloaded_error":
		return "overloaded"
	case e.Status == 404 || e.Type == "not_found_error":
		return "model_not_found"
	case e.Status == 400 || e.Type == "invalid_request_error":
		return "invalid_request"
	case e.Status >= 500 || e.Type == "api_error":
		return "server_error"
	}
	return "unknown"
}

// ErrorTypeForStatus is the Messages API's error type for an HTTP status
// (invalid_request_error for 400, rate_limit_error for 429,
// overloaded_error for 529, api_error for other 5xx, …): the vocabulary
// providers of other APIs and fakes use, so that [APIError.Kind] reads the
// same whoever answered.
func ErrorTypeForStatus(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
