package anthropic

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables read by [New] when the matching [Options] field is
// unset. Their names are the reference CLI's.
const (
	// EnvStreamIdleTimeout is the idle timeout in milliseconds
	// (Options.StreamIdleTimeout).
	EnvStreamIdleTimeout = "CLAUDE_STREAM_IDLE_TIMEOUT_MS"
	// EnvFirstByteTimeout is the first-byte timeout in milliseconds
	// (Options.FirstByteTimeout).
	EnvFirstByteTimeout = "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS"
	// EnvRequestTimeout is the per-attempt request timeout in milliseconds
	// (Options.RequestTimeout).
	EnvRequestTimeout = "API_TIMEOUT_MS"
	// EnvMaxRetries is the retry count (Options.MaxRetries).
	EnvMaxRetries = "CLAUDE_CODE_MAX_RETRIES"
)

// Timeout defaults.
const (
	// DefaultStreamIdleTimeout is the longest silence allowed between two
	// events of a stream when neither Options.StreamIdleTimeout nor
	// CLAUDE_STREAM_IDLE_TIMEOUT_MS is set. It is the reference's floor.
	DefaultStreamIdleTimeout = 300 * time.Second
	// DefaultFirstByteTimeout is the longest wait from sending a request to
	// the first event of its stream when neither Options.FirstByteTimeout
	// nor CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS is set.
	DefaultFirstByteTimeout = 300 * time.Second
	// maxEnvRetries caps CLAUDE_CODE_MAX_RETRIES, as the reference does.
	maxEnvRetries = 15
)

// TimeoutError is the failure of an attempt that the provider cut short
// because the API went silent or took too long. It is retried like a
// connection error; when retries run out, the returned [*model.APIError]
// wraps it (errors.As finds it).
type TimeoutError struct {
	// Which is "first_byte" (nothing came back: no headers, or headers but
	// no event), "idle" (the stream fell silent after Events events) or
	// "request" (the attempt as a whole took longer than allowed).
	Which string
	// After is the timeout that ran out.
	After time.Duration
	// Events is how many events the stream had delivered, pings included.
	Events int
}

func (e *TimeoutError) Error() string {
	switch e.Which {
	case "idle":
		return fmt.Sprintf("stream stalled: no event for %v after %d events (%s)", e.After, e.Events, EnvStreamIdleTimeout)
	case "request":
		return fmt.Sprintf("request timed out after %v (%s)", e.After, EnvRequestTimeout)
	}
	return fmt.Sprintf("no response within %v of sending the request (%s)", e.After, EnvFirstByteTimeout)
}

// timeouts are a provider's resolved limits; zero means none.
type timeouts struct {
	idle, firstByte, request time.Duration
}

// resolveTimeout applies option > environment > default: a positive option
// wins, a negative one turns the limit off, zero reads the variable env (a
// positive whole number of milliseconds) and falls back to def.
func resolveTimeout(getenv func(string) string, opt time.Duration, env string, def time.Duration) (time.Duration, error) {
	switch {
	case opt > 0:
		return opt, nil
	case opt < 0:
		return 0, nil
	}
	v := getenv(env)
	if strings.TrimSpace(v) == "" {
		return def, nil
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || ms <= 0 || ms > int64(24*time.Hour/time.Millisecond) {
		return 0, fmt.Errorf("anthropic: %s=%q: want a whole number of milliseconds between 1 and 86400000", env, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// resolveMaxRetries applies option > CLAUDE_CODE_MAX_RETRIES > default. The
// variable must be a whole number ≥ 0; values above 15 count as 15.
func resolveMaxRetries(getenv func(string) string, opt *int) (int, error) {
	if opt != nil {
		return max(*opt, 0), nil
	}
	v := getenv(EnvMaxRetries)
	if strings.TrimSpace(v) == "" {
		return DefaultMaxRetries, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("anthropic: %s=%q: want a whole number of retries, 0 or more", EnvMaxRetries, v)
	}
	return min(n, maxEnvRetries), nil
}

// watchdog cancels one attempt's context when the API is silent for too
// long: first the first-byte timeout runs, then the idle timeout, counted
// from the last event. The request timeout runs beside it from the start.
//
// An event only notes its time: the idle timer is not stopped and made
// again for each of a reply's many events. When it fires it checks how long
// the stream has really been silent and, if not long enough, waits for
// the rest.
type watchdog struct {
	t      timeouts
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	events int
	last   time.Time   // of the last event
	timer  *time.Timer // first-byte until the first event, then idle
	whole  *time.Timer // request
	err    *TimeoutError
	done   bool
}

// startWatchdog returns a context for one attempt, derived from ctx, and its
// watchdog. Call stop when the attempt is over.
func startWatchdog(ctx context.Context, t timeouts) (context.Context, *watchdog) {
	actx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{t: t, cancel: cancel}
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.firstByte > 0 {
		w.timer = time.AfterFunc(t.firstByte, w.firstByteDue)
	}
	if t.request > 0 {
		w.whole = time.AfterFunc(t.request, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.fire("request", t.request)
		})
	}
	return actx, w
}

// firstByteDue is the first-byte timer's: it cuts the attempt unless an
// event came (a timer stopped too late to keep it from running).
func (w *watchdog) firstByteDue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.events == 0 {
		w.fire("first_byte", w.t.firstByte)
	}
}

// idleDue is the idle timer's: it cuts the attempt when the stream has been
// silent for the idle timeout, and otherwise waits for what is left of it.
func (w *watchdog) idleDue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if quiet := time.Since(w.last); quiet < w.t.idle {
		w.timer.Reset(w.t.idle - quiet)
		return
	}
	w.fire("idle", w.t.idle)
}

// fire cancels the attempt unless it is over; w.mu is held.
func (w *watchdog) fire(which string, after time.Duration) {
	if w.done {
		return
	}
	w.done = true
	w.err = &TimeoutError{Which: which, After: after, Events: w.events}
	w.cancel(w.err)
}

// event records an event of the stream: the idle timeout counts from now.
func (w *watchdog) event() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.events++
	if w.t.idle > 0 {
		w.last = time.Now()
	}
	if w.events > 1 {
		return
	}
	// The first event: the first-byte timeout gives way to the idle one.
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.t.idle > 0 {
		w.timer = time.AfterFunc(w.t.idle, w.idleDue)
	}
}

// stop ends the watchdog and releases the attempt's context. It returns the
// timeout that cut the attempt short, or nil.
func (w *watchdog) stop() *TimeoutError {
	w.mu.Lock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.whole != nil {
		w.whole.Stop()
	}
	err := w.err
	w.mu.Unlock()
	w.cancel(nil)
	return err
}
