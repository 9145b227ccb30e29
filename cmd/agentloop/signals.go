package main

import (
	"context"
	"sync"
)

// signalHooks let the mode that runs the session take a signal its own
// way, as the reference does in stream-json mode: SIGINT interrupts the
// running turn (its partial reply, marker and result are written) and the
// command then ends with exit 0; SIGTERM ends it at once, with no result
// line. A mode that registers nothing gets the default: the run's context
// is cancelled and the exit code is 128 + the signal's number.
type signalHooks struct {
	mu sync.Mutex
	// interrupt, when set, interrupts the session for SIGINT; it
	// returns false when it could not (the default applies then).
	interrupt func() bool
	// mute, when set, is called for SIGTERM before the run is cancelled:
	// nothing more is written.
	mute func()
}

type signalHooksKey struct{}

// withSignalHooks returns ctx carrying fresh hooks.
func withSignalHooks(ctx context.Context) (context.Context, *signalHooks) {
	h := &signalHooks{}
	return context.WithValue(ctx, signalHooksKey{}, h), h
}

// onSignals registers the hooks of the running mode; a no-op when ctx
// carries none (tests that call run directly).
func onSignals(ctx context.Context, interrupt func() bool, mute func()) {
	h, _ := ctx.Value(signalHooksKey{}).(*signalHooks)
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.interrupt, h.mute = interrupt, mute
}

// sigint runs the interrupt hook; false when there is none or it failed.
func (h *signalHooks) sigint() bool {
	h.mu.Lock()
	f := h.interrupt
	h.mu.Unlock()
	return f != nil && f()
}

// sigterm runs the mute hook, if any.
func (h *signalHooks) sigterm() {
	h.mu.Lock()
	f := h.mute
	h.mu.Unlock()
	if f != nil {
		f()
	}
}
