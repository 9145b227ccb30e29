// Package otel reports agentloop sessions to OpenTelemetry: an
// observe.Observer that turns each observed step into a span of a
// TracerProvider and derives metrics from the spans through a
// MeterProvider.
//
// A program that has its own providers passes them to [New] and sets the
// result as agentloop.Options.Observer:
//
//	opts.Observer = otel.New(otel.Config{TracerProvider: tp, MeterProvider: mp})
//
// [FromEnv] builds everything from the environment variables the reference
// CLI and the OpenTelemetry SDKs read (CLAUDE_CODE_ENABLE_TELEMETRY,
// OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, TRACEPARENT, …), as the
// agentloop command does.
//
// # Metrics
//
// Each is recorded when the span it comes from ends:
//
//	agentloop.token.usage     counter {token}  model and compaction spans, by type (input, output, cache_read, cache_creation) and model
//	agentloop.cost.usage      counter USD      model and compaction spans, by model
//	agentloop.turn.count      counter {turn}   turn spans
//	agentloop.tool.calls      counter {call}   tool spans, by tool and permission decision
//	agentloop.tool.errors     counter {call}   tool spans whose result is an error, by tool
//	agentloop.model.duration  histogram s      model spans, by requested model and outcome
//	agentloop.tool.duration   histogram s      tool spans, by tool
//
// docs/observability.md lists the spans and their attributes.
package otel

import (
	"context"
	"sync"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop/observe"
)

// ScopeName is the instrumentation scope of agentloop's spans and metrics.
const ScopeName = "github.com/agentloop/agentloop"

// Config configures [New]. Its zero value uses the global providers and
// attaches no contents.
type Config struct {
	// TracerProvider gets the spans; nil means the global one
	// (go.opentelemetry.io/otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider gets the metrics; nil means the global one.
	MeterProvider metric.MeterProvider
	// LogUserPrompts attaches each prompt's text to its session span
	// (gen_ai.prompt), as the reference's OTEL_LOG_USER_PROMPTS does.
	LogUserPrompts bool
	// LogToolDetails attaches each tool call's input and result text to
	// its span (gen_ai.tool.call.arguments, gen_ai.tool.call.result), as
	// the reference's OTEL_LOG_TOOL_DETAILS does.
	LogToolDetails bool
	// Parent, when valid, is the parent of the spans started from a
	// context that holds no span (session spans, and hook spans of events
	// outside a run such as SessionStart): the trace of a caller in
	// another process, as TRACEPARENT gives it (see ParentFromEnv).
	Parent trace.SpanContext
}

// New returns an Observer that reports to cfg's providers. It never fails:
// an instrument the MeterProvider refuses is replaced by a no-op one.
func New(cfg Config) observe.Observer {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = gotel.GetTracerProvider()
	}
	mp := cfg.MeterProvider
	if mp == nil {
		mp = gotel.GetMeterProvider()
	}
	return &observer{
		tracer:  tp.Tracer(ScopeName),
		m:       newInstruments(mp.Meter(ScopeName)),
		content: observe.Content{UserPrompts: cfg.LogUserPrompts, ToolDetails: cfg.LogToolDetails},
		parent:  cfg.Parent,
	}
}

type observer struct {
	tracer  trace.Tracer
	m       instruments
	content observe.Content
	parent  trace.SpanContext
}

// Content implements observe.ContentPolicy.
func (o *observer) Content() observe.Content { return o.content }

// Start implements observe.Observer.
func (o *observer) Start(ctx context.Context, s observe.Start) (context.Context, observe.Span) {
	if o.parent.IsValid() && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, o.parent)
	}
	kind := trace.SpanKindInternal
	if s.Kind == observe.KindModel {
		kind = trace.SpanKindClient
	}
	sp := &span{o: o, kind: s.Kind, start: time.Now()}
	sp.note(s.Attrs)
	ctx, sp.span = o.tracer.Start(ctx, s.Name, trace.WithSpanKind(kind),
		trace.WithAttributes(convert(s.Attrs)...))
	return ctx, sp
}

// span is an OpenTelemetry span with what its metrics need.
type span struct {
	o     *observer
	span  trace.Span
	kind  observe.Kind
	start time.Time

	mu       sync.Mutex
	reqModel string
	model    string
	tool     string
	decision string
	tokens   [4]int64 // input, output, cache read, cache creation
	cost     float64
	isError  bool
	ended    bool
}

// SetAttrs implements observe.Span.
func (s *span) SetAttrs(attrs ...observe.Attr) {
	s.note(attrs)
	s.span.SetAttributes(convert(attrs)...)
}

// Event implements observe.Span.
func (s *span) Event(name string, attrs ...observe.Attr) {
	s.span.AddEvent(name, trace.WithAttributes(convert(attrs)...))
}

// End implements observe.Span: it ends the span, failed when err is not
// nil, and records the span's metrics. Calls after the first do nothing.
func (s *span) End(err error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.mu.Unlock()
	if err != nil {
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.record(err)
	s.span.End()
}

// note keeps the attributes the span's metrics use.
func (s *span) note(attrs []observe.Attr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range attrs {
		switch a.Key {
		case observe.AttrRequestModel:
			s.reqModel, _ = a.Value.(string)
		case observe.AttrResponseModel:
			s.model, _ = a.Value.(string)
		case observe.AttrToolName:
			s.tool, _ = a.Value.(string)
		case observe.AttrPermissionDecision:
			s.decision, _ = a.Value.(string)
		case observe.AttrToolIsError:
			s.isError, _ = a.Value.(bool)
		case observe.AttrInputTokens:
			s.tokens[0], _ = a.Value.(int64)
		case observe.AttrOutputTokens:
			s.tokens[1], _ = a.Value.(int64)
		case observe.AttrCacheReadTokens:
			s.tokens[2], _ = a.Value.(int64)
		case observe.AttrCacheCreateTokens:
			s.tokens[3], _ = a.Value.(int64)
		case observe.AttrCost:
			s.cost, _ = a.Value.(float64)
		}
	}
}

// convert turns observe attributes into OpenTelemetry ones; a value of
// another type is recorded as its string form.
func convert(attrs []observe.Attr) []attribute.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	kv := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.Value.(type) {
		case string:
			kv = append(kv, attribute.String(a.Key, v))
		case int64:
			kv = append(kv, attribute.Int64(a.Key, v))
		case int:
			kv = append(kv, attribute.Int(a.Key, v))
		case float64:
			kv = append(kv, attribute.Float64(a.Key, v))
		case bool:
			kv = append(kv, attribute.Bool(a.Key, v))
		case []string:
			kv = append(kv, attribute.StringSlice(a.Key, v))
		default:
			kv = append(kv, attribute.Stringer(a.Key, stringer{v}))
		}
	}
	return kv
}
