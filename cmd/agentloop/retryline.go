package main

import (
	"fmt"
	"time"

	"github.com/agentloop/agentloop/message"
)

// retryLine is the stderr line that tells a person, in text and json output,
// that the API call failed and will be retried: stream-json carries the
// system/api_retry message itself, the other formats would otherwise stay
// silent for minutes.
func retryLine(r *message.APIRetry) string {
	what := r.Detail
	if what == "" {
		what = "API error " + r.Error
		if r.ErrorStatus != nil {
			what = fmt.Sprintf("API error %d %s", *r.ErrorStatus, r.Error)
		}
	}
	delay := (time.Duration(r.RetryDelayMs) * time.Millisecond).Round(100 * time.Millisecond)
	return fmt.Sprintf("agentloop: retry %d/%d in %v: %s", r.Attempt, r.MaxRetries, delay, what)
}
