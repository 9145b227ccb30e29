package agentloop

import (
	"time"

	"github.com/agentloop/agentloop/model/anthropic"
)

// APIOptions tune the built-in Anthropic provider: how long it waits for the
// API and how often it retries. They apply only when Options.Provider is nil
// (the session builds the provider); with a Provider of your own they are
// reported through the diagnostics (DiagOption) and otherwise ignored. The
// zero value, like a nil *APIOptions, keeps every default.
//
// Precedence for each field: the field when set, else the reference CLI's
// environment variable, else the default (see package model/anthropic). A
// malformed environment variable makes the session fail to start with an
// error naming it.
type APIOptions struct {
	// StreamIdleTimeout is the longest silence allowed between two events
	// of a reply's stream (pings count). Zero: CLAUDE_STREAM_IDLE_TIMEOUT_MS,
	// else 300 s. Negative: no limit. A stalled stream is retried.
	StreamIdleTimeout time.Duration
	// FirstByteTimeout is the longest wait from sending a request to the
	// first event of its stream (connect, headers, first event). Zero:
	// CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS, else 300 s. Negative: no limit.
	FirstByteTimeout time.Duration
	// RequestTimeout bounds each attempt as a whole. Zero: API_TIMEOUT_MS,
	// else no limit. Negative: no limit.
	RequestTimeout time.Duration
	// MaxRetries is how many times a failed request is retried. Nil:
	// CLAUDE_CODE_MAX_RETRIES (capped at 15), else 10. Errors that cannot
	// succeed on retry (a second 401, a second "no such host") end sooner.
	MaxRetries *int
}

// providerOptions returns the provider options a for the built-in provider.
func (a *APIOptions) providerOptions() *anthropic.Options {
	if a == nil {
		return nil
	}
	return &anthropic.Options{
		StreamIdleTimeout: a.StreamIdleTimeout,
		FirstByteTimeout:  a.FirstByteTimeout,
		RequestTimeout:    a.RequestTimeout,
		MaxRetries:        a.MaxRetries,
	}
}

// set reports whether a asks for anything.
func (a *APIOptions) set() bool {
	return a != nil && (a.StreamIdleTimeout != 0 || a.FirstByteTimeout != 0 || a.RequestTimeout != 0 || a.MaxRetries != nil)
}
