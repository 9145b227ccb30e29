package main

import (
	"context"
	"sync"
	"time"

	gotel "go.opentelemetry.io/otel"

	"github.com/agentloop/agentloop/otel"
)

// telemetryFlushTimeout bounds how long the command waits, before it
// exits, for the telemetry it buffered to be sent.
const telemetryFlushTimeout = 5 * time.Second

// startTelemetry turns OpenTelemetry on when the environment asks for it
// (CLAUDE_CODE_ENABLE_TELEMETRY=1 and the OTEL_* variables; see
// otel.FromEnv): c.observer is set for options to pass on, and the
// function returned flushes and stops the exporters, to be called before
// the command exits, whichever way it ends. A setting agentloop cannot
// honour is reported through warn and leaves telemetry off; the run goes
// on. Errors of the exporters (a collector that cannot be reached) are
// warnings too, each distinct one once. With telemetry off this reads one
// variable and does nothing else.
func (c *config) startTelemetry(ctx context.Context, warn func(string)) func() {
	o, shutdown, err := otel.FromEnv(ctx)
	if err != nil {
		warn("telemetry is off: " + err.Error())
		return func() {}
	}
	if o == nil {
		return func() {}
	}
	c.observer = o
	var mu sync.Mutex
	seen := map[string]bool{}
	gotel.SetErrorHandler(gotel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if text := "telemetry: " + err.Error(); !seen[text] {
			seen[text] = true
			warn(text)
		}
	}))
	return func() {
		// The run's context may be cancelled (a signal): flush anyway.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryFlushTimeout)
		defer cancel()
		if err := shutdown(fctx); err != nil {
			warn(err.Error())
		}
	}
}
