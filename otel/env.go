package otel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agentloop/agentloop/observe"
	"github.com/agentloop/agentloop/otel/internal/otlp"
)

// The environment variables FromEnv reads itself; its OTLP exporters read
// the OTEL_EXPORTER_OTLP_* ones (endpoint, headers, timeout, compression,
// TLS, metrics temporality; see FromEnv), the SDK the OTEL_BSP_*,
// OTEL_METRIC_EXPORT_* and OTEL_RESOURCE_ATTRIBUTES ones.
const (
	// EnvEnable turns telemetry on when "1" or "true", as in the
	// reference CLI; anything else leaves it off.
	EnvEnable          = "CLAUDE_CODE_ENABLE_TELEMETRY"
	EnvTracesExporter  = "OTEL_TRACES_EXPORTER"  // otlp, or none (the default)
	EnvMetricsExporter = "OTEL_METRICS_EXPORTER" // otlp, or none (the default)
	// EnvProtocol and the per-signal EnvTracesProtocol and
	// EnvMetricsProtocol must be http/protobuf (the default) when set.
	EnvProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvMetricsProtocol = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
	EnvLogUserPrompts  = "OTEL_LOG_USER_PROMPTS" // "1" or "true": Config.LogUserPrompts
	EnvLogToolDetails  = "OTEL_LOG_TOOL_DETAILS" // "1" or "true": Config.LogToolDetails
	// EnvTraceParent and EnvTraceState are the W3C trace context of the
	// caller (see ParentFromEnv).
	EnvTraceParent = "TRACEPARENT"
	EnvTraceState  = "TRACESTATE"
)

// ErrUnsupported is wrapped by FromEnv's error for an exporter or protocol
// it cannot provide.
var ErrUnsupported = errors.New("unsupported telemetry setting")

// FromEnv builds an Observer from the environment. Telemetry is off unless
// CLAUDE_CODE_ENABLE_TELEMETRY is "1" or "true": FromEnv then returns a nil
// Observer (observing nothing) and a shutdown that does nothing, having
// read nothing else. When it is on, spans go to OTEL_TRACES_EXPORTER and
// metrics to OTEL_METRICS_EXPORTER, each "otlp" (OTLP over HTTP with
// protobuf) or "none"; as in the reference CLI, a signal whose variable is
// unset is not exported (the OpenTelemetry SDKs would default to otlp).
// Any other exporter or protocol is an error wrapping ErrUnsupported, with
// a nil Observer. With neither signal exported the Observer is nil too.
// Session spans continue the trace of TRACEPARENT and TRACESTATE when they
// hold a valid W3C trace context.
//
// The exporters are agentloop's own (package otel/internal/otlp): OTLP
// protobuf encoded by hand and posted over HTTP, so that linking this
// package does not link gRPC. For each exported signal they read, as the
// OTLP exporter specification has them, the per-signal variable winning:
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, default http://localhost:4318,
// to which /v1/traces or /v1/metrics is appended) or
// OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT (used as is), and
// OTEL_EXPORTER_OTLP_[{TRACES,METRICS}_]{HEADERS,TIMEOUT,COMPRESSION,
// CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY}, plus
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE (cumulative, delta,
// lowmemory) and OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION.
// A malformed value of one of them is an error naming the variable, with
// a nil Observer. An export is retried on 429, 502, 503, 504 and
// connection errors, within the timeout (10 s by default); a refused
// connection (no collector listening) is not, so that a program without
// a collector does not wait out the timeout at exit.
//
// shutdown flushes what is buffered and stops the exporters; call it
// before the program exits (it is never nil).
func FromEnv(ctx context.Context) (o observe.Observer, shutdown func(context.Context) error, err error) {
	nop := func(context.Context) error { return nil }
	if !truthy(os.Getenv(EnvEnable)) {
		return nil, nop, nil
	}
	traces, err := exporterChoice(EnvTracesExporter, EnvTracesProtocol)
	if err != nil {
		return nil, nop, err
	}
	metrics, err := exporterChoice(EnvMetricsExporter, EnvMetricsProtocol)
	if err != nil {
		return nil, nop, err
	}
	if !traces && !metrics {
		return nil, nop, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "agentloop")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES still leaves a resource.
		if res == nil {
			return nil, nop, fmt.Errorf("otel: the resource: %w", err)
		}
	}
	cfg := Config{
		LogUserPrompts: truthy(os.Getenv(EnvLogUserPrompts)),
		LogToolDetails: truthy(os.Getenv(EnvLogToolDetails)),
		Parent:         ParentFromEnv(),
	}
	var shutdowns []func(context.Context) error
	if traces {
		exp, err := newTraceExporter()
		if err != nil {
			return nil, nop, fmt.Errorf("otel: the OTLP trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		cfg.TracerProvider = tp
		shutdowns = append(shutdowns, tp.Shutdown)
	} else {
		cfg.TracerProvider = tracenoop.NewTracerProvider()
	}
	if metrics {
		exp, err := newMetricExporter()
		if err != nil {
			for _, f := range shutdowns {
				_ = f(ctx)
			}
			return nil, nop, fmt.Errorf("otel: the OTLP metric exporter: %w", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		cfg.MeterProvider = mp
		shutdowns = append(shutdowns, mp.Shutdown)
	} else {
		cfg.MeterProvider = metricnoop.NewMeterProvider()
	}
	shutdown = func(ctx context.Context) error {
		var errs []error
		for _, f := range shutdowns {
			if err := f(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("otel: flushing telemetry: %w", err)
		}
		return nil
	}
	return New(cfg), shutdown, nil
}

func newTraceExporter() (*otlp.TraceExporter, error) {
	cfg, err := otlp.ConfigFromEnv(otlp.Traces, os.Getenv)
	if err != nil {
		return nil, err
	}
	return otlp.NewTraceExporter(cfg)
}

func newMetricExporter() (*otlp.MetricExporter, error) {
	cfg, err := otlp.ConfigFromEnv(otlp.Metrics, os.Getenv)
	if err != nil {
		return nil, err
	}
	return otlp.NewMetricExporter(cfg)
}

// exporterChoice reads one signal's exporter variable: true for otlp,
// false for none or unset.
func exporterChoice(exporterVar, protocolVar string) (bool, error) {
	on := false
	v := strings.TrimSpace(os.Getenv(exporterVar))
	for _, name := range strings.Split(v, ",") {
		switch strings.TrimSpace(name) {
		case "otlp":
			on = true
		case "none", "":
		default:
			return false, fmt.Errorf("otel: %s=%q: %w: agentloop exports only otlp (or none)", exporterVar, v, ErrUnsupported)
		}
	}
	if !on {
		return false, nil
	}
	for _, pv := range []string{protocolVar, EnvProtocol} {
		p := strings.TrimSpace(os.Getenv(pv))
		if p == "" {
			continue
		}
		if p != "http/protobuf" {
			return false, fmt.Errorf("otel: %s=%q: %w: agentloop sends OTLP as http/protobuf only", pv, p, ErrUnsupported)
		}
		break // the per-signal variable wins over the general one
	}
	return true, nil
}

// ParentFromEnv returns the span context of TRACEPARENT and TRACESTATE, as
// a remote parent, or an invalid one when TRACEPARENT is unset or
// malformed.
func ParentFromEnv() trace.SpanContext {
	tp := os.Getenv(EnvTraceParent)
	if tp == "" {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts := os.Getenv(EnvTraceState); ts != "" {
		carrier["tracestate"] = ts
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), carrier)
	return trace.SpanContextFromContext(ctx)
}

func truthy(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "1" || v == "true"
}
