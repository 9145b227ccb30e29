package otlp

import (
	"context"
	"errors"
	"sync/atomic"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ErrShutdown is returned by an export after the exporter's Shutdown.
var ErrShutdown = errors.New("otlp: the exporter is shut down")

// TraceExporter is an sdktrace.SpanExporter that posts each batch of spans
// as one ExportTraceServiceRequest.
type TraceExporter struct {
	c       *client
	stopped atomic.Bool
}

var _ sdktrace.SpanExporter = (*TraceExporter)(nil)

// NewTraceExporter returns an exporter for cfg (see ConfigFromEnv). It
// connects to nothing until the first export.
func NewTraceExporter(cfg Config) (*TraceExporter, error) {
	c, err := newClient(cfg, "spans")
	if err != nil {
		return nil, err
	}
	return &TraceExporter{c: c}, nil
}

// ExportSpans sends spans, within the configured timeout and ctx (see
// Config.Timeout); an empty batch sends nothing.
func (e *TraceExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return ErrShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	return e.c.post(ctx, AppendTraces(nil, spans))
}

// Shutdown stops the exporter: later exports fail with ErrShutdown. It
// returns ctx's error if ctx is already done.
func (e *TraceExporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	e.c.hc.CloseIdleConnections()
	return ctx.Err()
}

// MetricExporter is an sdkmetric.Exporter that posts each collection as
// one ExportMetricsServiceRequest.
type MetricExporter struct {
	c           *client
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
	stopped     atomic.Bool
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter returns an exporter for cfg (see ConfigFromEnv),
// with cfg's temporality and aggregation selectors (the SDK's defaults
// when nil). It connects to nothing until the first export.
func NewMetricExporter(cfg Config) (*MetricExporter, error) {
	c, err := newClient(cfg, "data points")
	if err != nil {
		return nil, err
	}
	e := &MetricExporter{c: c, temporality: cfg.Temporality, aggregation: cfg.Aggregation}
	if e.temporality == nil {
		e.temporality = sdkmetric.DefaultTemporalitySelector
	}
	if e.aggregation == nil {
		e.aggregation = sdkmetric.DefaultAggregationSelector
	}
	return e, nil
}

// Temporality returns the configured temporality of instruments of kind k.
func (e *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

// Aggregation returns the configured aggregation of instruments of kind k.
func (e *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.aggregation(k)
}

// Export sends rm, within the configured timeout and ctx; a collection
// with no scope metrics sends nothing. Metrics AppendMetrics cannot
// encode are left out of the request and reported in the error, joined
// with the send's own error.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.stopped.Load() {
		return ErrShutdown
	}
	if rm == nil || len(rm.ScopeMetrics) == 0 {
		return nil
	}
	body, encErr := AppendMetrics(nil, rm)
	return errors.Join(encErr, e.c.post(ctx, body))
}

// ForceFlush does nothing (the exporter holds no data): it returns ctx's
// error, if any.
func (e *MetricExporter) ForceFlush(ctx context.Context) error {
	return ctx.Err()
}

// Shutdown stops the exporter: later exports fail with ErrShutdown. It
// returns ctx's error if ctx is already done.
func (e *MetricExporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	e.c.hc.CloseIdleConnections()
	return ctx.Err()
}
