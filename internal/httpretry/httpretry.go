// Package httpretry is what agentloop's HTTP clients share about retrying
// a failed request: how long the server asks them to wait, the backoff of
// the model providers when it does not say, and a wait that a context
// cuts short.
package httpretry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxAfter is the longest wait a server may ask for; a longer one is taken
// for garbage.
const maxAfter = 24 * time.Hour

// After returns how long the response headers h ask a client to wait
// before trying again: retry-after-ms (milliseconds, as the Anthropic and
// OpenAI APIs send it), else Retry-After in seconds (fractions allowed) or
// as an HTTP date. It is 0 when neither is there, or the value is
// malformed, not positive, or over a day.
func After(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms <= float64(maxAfter/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs > 0 && secs <= maxAfter.Seconds() {
			return time.Duration(secs * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 && d <= maxAfter {
			return d
		}
	}
	return 0
}

// The model providers' backoff: retry n waits min(BaseDelay × 2^(n−1),
// MaxDelay) plus up to JitterFraction of that.
const (
	BaseDelay      = 500 * time.Millisecond
	MaxDelay       = 32 * time.Second
	JitterFraction = 0.25
)

// Backoff returns the wait before retry n (1 for the first; less counts as
// 1): retryAfter when the server gave one (positive), else the providers'
// exponential backoff with jitter, a number in [0, 1) (anything else
// counts as 0).
func Backoff(n int, retryAfter time.Duration, jitter float64) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := MaxDelay
	if n <= 7 { // 500ms × 2^6 = 32s
		d = min(BaseDelay<<(max(n, 1)-1), MaxDelay)
	}
	if !(jitter >= 0 && jitter < 1) {
		jitter = 0
	}
	return d + time.Duration(jitter*JitterFraction*float64(d))
}

// Sleep waits d, or until ctx is done, when it returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
