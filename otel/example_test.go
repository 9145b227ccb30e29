package otel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	alotel "github.com/agentloop/agentloop/otel"
	"github.com/agentloop/agentloop/settings"
)

// Spans of a one-turn Query, kept in memory.
func ExampleNew() {
	srv := agentlooptest.NewServer(agentlooptest.Text("Hello."))
	defer srv.Close()
	p, _ := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	opts := &agentloop.Options{Provider: p, Cwd: ".", NoSessionPersistence: true,
		SettingSources: []settings.SettingSource{}, Tools: []string{},
		Observer: alotel.New(alotel.Config{TracerProvider: tp})}
	if _, err := agentloop.Query(context.Background(), "Say hello.", opts).Result(); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range exp.GetSpans() { // in the order they ended
		fmt.Println(s.Name)
	}
	// Output:
	// chat claude-opus-5-5
	// agentloop.turn
	// invoke_agent agentloop
}
