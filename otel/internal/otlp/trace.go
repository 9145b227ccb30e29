package otlp

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Span flags (trace/v1 SpanFlags): the low 8 bits are the W3C trace flags.
const (
	flagHasIsRemote = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	flagIsRemote    = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
)

// AppendTraces appends to b the protobuf encoding of an
// ExportTraceServiceRequest holding spans, and returns the extended
// buffer. Spans are grouped into one ResourceSpans per distinct resource
// and, inside it, one ScopeSpans per instrumentation scope, in the order
// they first appear; nil spans are skipped. Every field of the SDK span
// that OTLP has is written: ids, trace state, parent, name, kind, times,
// attributes, events, links, status, dropped counts and flags (the W3C
// trace flags with the has-is-remote bit set, and the is-remote bit when
// the parent, or for a link the linked span, is remote, as the official
// exporter does).
func AppendTraces(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   attribute.Distinct
		scope instrumentation.Scope
	}
	type resGroup struct {
		first  sdktrace.ReadOnlySpan
		scopes []scopeKey
	}
	var resOrder []attribute.Distinct
	groups := map[attribute.Distinct]*resGroup{}
	bySc := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		rk := s.Resource().Equivalent()
		g := groups[rk]
		if g == nil {
			g = &resGroup{first: s}
			groups[rk] = g
			resOrder = append(resOrder, rk)
		}
		sk := scopeKey{rk, s.InstrumentationScope()}
		if _, ok := bySc[sk]; !ok {
			g.scopes = append(g.scopes, sk)
		}
		bySc[sk] = append(bySc[sk], s)
	}
	for _, rk := range resOrder {
		g := groups[rk]
		// ResourceSpans: resource = 1, scope_spans = 2, schema_url = 3.
		b = appendMessage(b, 1, func(b []byte) []byte {
			res := g.first.Resource()
			b = appendResource(b, 1, res)
			for _, sk := range g.scopes {
				// ScopeSpans: scope = 1, spans = 2, schema_url = 3.
				b = appendMessage(b, 2, func(b []byte) []byte {
					b = appendScope(b, 1, sk.scope)
					for _, s := range bySc[sk] {
						b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
					}
					return appendString(b, 3, sk.scope.SchemaURL)
				})
			}
			if res != nil {
				b = appendString(b, 3, res.SchemaURL())
			}
			return b
		})
	}
	return b
}

// appendSpan appends the fields of a Span (trace/v1).
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, spanKind(s.SpanKind()))
	b = appendFixed64(b, 7, unixNanos(s.StartTime()))
	b = appendFixed64(b, 8, unixNanos(s.EndTime()))
	b = appendKeyValues(b, 9, s.Attributes())
	b = appendVarint(b, 10, clamp32(s.DroppedAttributes()))
	for _, e := range s.Events() {
		// Span.Event: time_unix_nano = 1, name = 2, attributes = 3,
		// dropped_attributes_count = 4.
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64(b, 1, unixNanos(e.Time))
			b = appendString(b, 2, e.Name)
			b = appendKeyValues(b, 3, e.Attributes)
			return appendVarint(b, 4, clamp32(e.DroppedAttributeCount))
		})
	}
	b = appendVarint(b, 12, clamp32(s.DroppedEvents()))
	for _, l := range s.Links() {
		// Span.Link: trace_id = 1, span_id = 2, trace_state = 3,
		// attributes = 4, dropped_attributes_count = 5, flags = 6.
		b = appendMessage(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytes(b, 1, ltid[:])
			b = appendBytes(b, 2, lsid[:])
			b = appendString(b, 3, l.SpanContext.TraceState().String())
			b = appendKeyValues(b, 4, l.Attributes)
			b = appendVarint(b, 5, clamp32(l.DroppedAttributeCount))
			return appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		})
	}
	b = appendVarint(b, 14, clamp32(s.DroppedLinks()))
	// Status: message = 2, code = 3; always present, as the official
	// exporter writes it.
	st := s.Status()
	b = appendMessage(b, 15, func(b []byte) []byte {
		b = appendString(b, 2, st.Description)
		return appendVarint(b, 3, statusCode(st.Code))
	})
	return appendFixed32(b, 16, spanFlags(sc.TraceFlags(), parent.IsRemote()))
}

// spanKind maps trace.SpanKind to OTLP's Span.SpanKind: INTERNAL = 1,
// SERVER = 2, CLIENT = 3, PRODUCER = 4, CONSUMER = 5 (the same numbers as
// the Go API's), anything else UNSPECIFIED = 0.
func spanKind(k trace.SpanKind) uint64 {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

// statusCode maps codes.Code (Unset = 0, Error = 1, Ok = 2) to OTLP's
// Status.StatusCode (UNSET = 0, OK = 1, ERROR = 2).
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// spanFlags is OTLP's flags field: the W3C trace flags, the
// has-is-remote bit, and the is-remote bit when remote is true.
func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if remote {
		f |= flagIsRemote
	}
	return f
}
