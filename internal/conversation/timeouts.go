package conversation

import (
	"time"

	"github.com/agentloop/agentloop/model/anthropic"
)

// APIOptions is agentloop.APIOptions as the session reads it; the fields are
// documented there.
type APIOptions struct {
	StreamIdleTimeout time.Duration
	FirstByteTimeout  time.Duration
	RequestTimeout    time.Duration
	MaxRetries        *int
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
