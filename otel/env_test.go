package otel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	alotel "github.com/agentloop/agentloop/otel"
)

// TestFromEnv: telemetry is on only with CLAUDE_CODE_ENABLE_TELEMETRY, and
// an exporter or protocol agentloop cannot provide is an error.
func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		wantObs  bool
		wantErr  error
		wantText string
	}{
		{name: "unset", env: map[string]string{}, wantObs: false},
		{name: "zero", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "OTEL_TRACES_EXPORTER": "zipkin"}, wantObs: false},
		{name: "no exporter", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1"}, wantObs: false},
		{name: "traces", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "otlp"}, wantObs: true},
		{name: "metrics", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "true", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_TRACES_EXPORTER": "none"}, wantObs: true},
		{name: "both none", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, wantObs: false},
		{name: "zipkin", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "zipkin"},
			wantErr: alotel.ErrUnsupported, wantText: "OTEL_TRACES_EXPORTER"},
		{name: "console metrics", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp,console"},
			wantErr: alotel.ErrUnsupported, wantText: "OTEL_METRICS_EXPORTER"},
		{name: "grpc", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			wantErr: alotel.ErrUnsupported, wantText: "grpc"},
		{name: "per-signal protocol wins", env: map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, wantObs: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"CLAUDE_CODE_ENABLE_TELEMETRY", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
				"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
				t.Setenv(k, "")
			}
			// Nothing listens here: nothing is exported in this test.
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			o, shutdown, err := alotel.FromEnv(context.Background())
			if shutdown == nil {
				t.Fatal("nil shutdown")
			}
			defer shutdown(context.Background())
			if !errors.Is(err, c.wantErr) || (err != nil && !strings.Contains(err.Error(), c.wantText)) {
				t.Fatalf("error %v, want %v mentioning %q", err, c.wantErr, c.wantText)
			}
			if (o != nil) != c.wantObs {
				t.Errorf("observer %v, want one: %v", o, c.wantObs)
			}
		})
	}
}

// TestFromEnvBadExporterVariable: a malformed OTEL_EXPORTER_OTLP_* value
// of an exported signal is an error naming the variable, with no
// Observer; the variables of a signal not exported are not read.
func TestFromEnvBadExporterVariable(t *testing.T) {
	for _, c := range []struct {
		name, signal, variable, value string
		wantErr                       bool
	}{
		{"traces timeout", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TIMEOUT", "10s", true},
		{"metrics endpoint", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "collector:4318", true},
		{"metrics temporality", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "often", true},
		{"other signal", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "collector:4318", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
				t.Setenv(k, "")
			}
			t.Setenv("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			t.Setenv(c.signal, "otlp")
			t.Setenv(c.variable, c.value)
			o, shutdown, err := alotel.FromEnv(context.Background())
			defer shutdown(context.Background())
			if !c.wantErr {
				if err != nil || o == nil {
					t.Fatalf("observer %v, error %v", o, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.variable) || o != nil {
				t.Errorf("observer %v, error %v; want an error naming %s", o, err, c.variable)
			}
		})
	}
}
