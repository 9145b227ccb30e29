package otel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/observe"
	alotel "github.com/agentloop/agentloop/otel"
	"github.com/agentloop/agentloop/settings"
)

// BenchmarkQueryObserved measures a Query of two turns (a tool call, then
// text) against a loopback fake API, without an Observer and with the
// OpenTelemetry one (spans kept in memory, metrics on a manual reader).
func BenchmarkQueryObserved(b *testing.B) {
	for _, c := range []struct {
		name string
		o    func() observe.Observer
	}{
		{"nil", func() observe.Observer { return nil }},
		{"otel", func() observe.Observer {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			return alotel.New(alotel.Config{TracerProvider: tp, MeterProvider: mp})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := agentlooptest.NewTB(b)
			n := 0
			srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
				n++
				if n%2 == 1 {
					return agentlooptest.ToolUse("toolu_1", "echo", map[string]any{"text": "x"}), true
				}
				return agentlooptest.Text("done"), true
			})
			p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL,
				Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
			if err != nil {
				b.Fatal(err)
			}
			opts := &agentloop.Options{Provider: p, Cwd: b.TempDir(), NoSessionPersistence: true,
				SettingSources: []settings.SettingSource{}, Tools: []string{}, CustomTools: tools(), Observer: c.o()}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := agentloop.Query(context.Background(), "go", opts).Result(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
