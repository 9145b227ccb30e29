package otlp

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

func spanContext(t *testing.T, tid, sid, state string, flags trace.TraceFlags, remote bool) trace.SpanContext {
	t.Helper()
	traceID, err := trace.TraceIDFromHex(tid)
	if err != nil {
		t.Fatal(err)
	}
	spanID, err := trace.SpanIDFromHex(sid)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := trace.ParseTraceState(state)
	if err != nil {
		t.Fatal(err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: flags, TraceState: ts, Remote: remote})
}

// TestAppendTracesRoundTrip: every field of SDK spans that OTLP has comes
// back, through the official generated types, as written; kinds, status
// codes and flags are checked against literal OTLP values too.
func TestAppendTracesRoundTrip(t *testing.T) {
	const tid = "0af7651916cd43dd8448eb211c80319c"
	start := time.Unix(1700000000, 123456789)
	resA := resource.NewWithAttributes("https://schema/a", append(everyAttribute("res."), attribute.String("service.name", "svc"))...)
	resB := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope1 := instrumentation.Scope{Name: "s1", Version: "v1.2", SchemaURL: "https://schema/s1",
		Attributes: attribute.NewSet(attribute.String("scope.k", "v"), attribute.Int64("scope.n", 9))}
	scope2 := instrumentation.Scope{Name: "s2"}

	full := tracetest.SpanStub{
		Name:        "full",
		SpanContext: spanContext(t, tid, "00f067aa0ba902b7", "a=1,b=two", trace.FlagsSampled, false),
		Parent:      spanContext(t, tid, "b7ad6b7169203331", "", trace.FlagsSampled, true),
		SpanKind:    trace.SpanKindClient,
		StartTime:   start,
		EndTime:     start.Add(1500 * time.Millisecond),
		Attributes:  everyAttribute(""),
		Events: []sdktrace.Event{
			{Name: "retry", Time: start.Add(time.Millisecond), Attributes: everyAttribute("ev."), DroppedAttributeCount: 2},
			{Name: "bare"},
		},
		Links: []sdktrace.Link{
			{SpanContext: spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b8", "x=y", trace.FlagsSampled, true),
				Attributes: []attribute.KeyValue{attribute.String("link", "l")}, DroppedAttributeCount: 1},
			{SpanContext: spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4737", "00f067aa0ba902b9", "", 0, false)},
		},
		Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
		DroppedAttributes:    3,
		DroppedEvents:        4,
		DroppedLinks:         70000,
		Resource:             resA,
		InstrumentationScope: scope1,
	}
	local := tracetest.SpanStub{
		Name:        "local child",
		SpanContext: spanContext(t, tid, "1111111111111111", "", trace.FlagsSampled, false),
		Parent:      full.SpanContext,
		SpanKind:    trace.SpanKindInternal,
		StartTime:   start, EndTime: start.Add(time.Second),
		Status:               sdktrace.Status{Code: codes.Ok},
		Resource:             resA,
		InstrumentationScope: scope1,
	}
	var spans []sdktrace.ReadOnlySpan
	kinds := []trace.SpanKind{trace.SpanKindServer, trace.SpanKindProducer, trace.SpanKindConsumer, trace.SpanKindUnspecified}
	spans = append(spans, full.Snapshot(), nil)
	for i, k := range kinds {
		s := tracetest.SpanStub{
			Name:                 "kind",
			SpanContext:          spanContext(t, tid, "222222222222222"+string(rune('0'+i)), "", 0, false),
			SpanKind:             k,
			StartTime:            start,
			Resource:             resB,
			InstrumentationScope: scope2,
		}
		if i == 0 {
			s.Resource, s.InstrumentationScope = resA, scope2
		}
		spans = append(spans, s.Snapshot())
	}
	spans = append(spans, local.Snapshot())

	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(AppendTraces([]byte{}, spans), &got); err != nil {
		t.Fatal(err)
	}

	// Grouped by resource, then scope, in order of first appearance.
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{Resource: pbResource(resA), SchemaUrl: "https://schema/a", ScopeSpans: []*tracepb.ScopeSpans{
			{Scope: pbScope(scope1), SchemaUrl: "https://schema/s1", Spans: []*tracepb.Span{pbSpan(spans[0]), pbSpan(spans[6])}},
			{Scope: pbScope(scope2), Spans: []*tracepb.Span{pbSpan(spans[2])}},
		}},
		{Resource: pbResource(resB), ScopeSpans: []*tracepb.ScopeSpans{
			{Scope: pbScope(scope2), Spans: []*tracepb.Span{pbSpan(spans[3]), pbSpan(spans[4]), pbSpan(spans[5])}},
		}},
	}}
	if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("decoded request differs (-want +got):\n%s", diff)
	}

	// Literal OTLP values, independent of pbSpan.
	rs := got.GetResourceSpans()
	if len(rs) != 2 || len(rs[0].ScopeSpans) != 2 || len(rs[1].ScopeSpans) != 1 {
		t.Fatalf("grouping: %v", &got)
	}
	f := rs[0].ScopeSpans[0].Spans[0]
	if f.Kind != tracepb.Span_SPAN_KIND_CLIENT || f.Status.Code != tracepb.Status_STATUS_CODE_ERROR || f.Status.Message != "boom" {
		t.Errorf("full span kind %v status %v", f.Kind, f.Status)
	}
	if f.Flags != 0x301 {
		t.Errorf("full span flags %#x, want 0x301 (sampled, has-is-remote, remote parent)", f.Flags)
	}
	if f.Links[0].Flags != 0x301 || f.Links[1].Flags != 0x100 {
		t.Errorf("link flags %#x %#x, want 0x301 0x100", f.Links[0].Flags, f.Links[1].Flags)
	}
	if f.StartTimeUnixNano != 1700000000123456789 || f.DroppedLinksCount != 70000 {
		t.Errorf("start %d dropped links %d", f.StartTimeUnixNano, f.DroppedLinksCount)
	}
	l := rs[0].ScopeSpans[0].Spans[1]
	if l.Kind != tracepb.Span_SPAN_KIND_INTERNAL || l.Status.Code != tracepb.Status_STATUS_CODE_OK || l.Flags != 0x101 {
		t.Errorf("local span kind %v status %v flags %#x", l.Kind, l.Status, l.Flags)
	}
	var gotKinds []tracepb.Span_SpanKind
	for _, s := range append(rs[0].ScopeSpans[1].Spans, rs[1].ScopeSpans[0].Spans...) {
		gotKinds = append(gotKinds, s.Kind)
		if s.Status == nil || s.Status.Code != tracepb.Status_STATUS_CODE_UNSET {
			t.Errorf("span status %v, want unset", s.Status)
		}
	}
	wantKinds := []tracepb.Span_SpanKind{tracepb.Span_SPAN_KIND_SERVER, tracepb.Span_SPAN_KIND_PRODUCER,
		tracepb.Span_SPAN_KIND_CONSUMER, tracepb.Span_SPAN_KIND_UNSPECIFIED}
	if diff := cmp.Diff(wantKinds, gotKinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

// TestAppendTracesEmpty: no spans, or only nil ones, is an empty request.
func TestAppendTracesEmpty(t *testing.T) {
	if b := AppendTraces(nil, []sdktrace.ReadOnlySpan{nil}); len(b) != 0 {
		t.Errorf("got %x", b)
	}
}

// pbSpan is the expected OTLP span of s.
func pbSpan(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	out := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Name:                   s.Name(),
		Kind:                   tracepb.Span_SpanKind(s.SpanKind()), // equal numbers, 0 for unspecified
		StartTimeUnixNano:      pbTime(s.StartTime()),
		EndTimeUnixNano:        pbTime(s.EndTime()),
		Attributes:             pbKVs(s.Attributes()),
		DroppedAttributesCount: uint32(s.DroppedAttributes()),
		DroppedEventsCount:     uint32(s.DroppedEvents()),
		DroppedLinksCount:      uint32(s.DroppedLinks()),
		Status:                 &tracepb.Status{Message: s.Status().Description},
		Flags:                  uint32(sc.TraceFlags()) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK),
	}
	switch s.Status().Code {
	case codes.Ok:
		out.Status.Code = tracepb.Status_STATUS_CODE_OK
	case codes.Error:
		out.Status.Code = tracepb.Status_STATUS_CODE_ERROR
	}
	if s.Parent().IsRemote() {
		out.Flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	if p := s.Parent().SpanID(); p.IsValid() {
		out.ParentSpanId = p[:]
	}
	for _, e := range s.Events() {
		out.Events = append(out.Events, &tracepb.Span_Event{TimeUnixNano: pbTime(e.Time), Name: e.Name,
			Attributes: pbKVs(e.Attributes), DroppedAttributesCount: uint32(e.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		pl := &tracepb.Span_Link{TraceId: ltid[:], SpanId: lsid[:], TraceState: l.SpanContext.TraceState().String(),
			Attributes: pbKVs(l.Attributes), DroppedAttributesCount: uint32(l.DroppedAttributeCount),
			Flags: uint32(l.SpanContext.TraceFlags()) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)}
		if l.SpanContext.IsRemote() {
			pl.Flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
		}
		out.Links = append(out.Links, pl)
	}
	return out
}

// TestAppendTracesInvalidUTF8: invalid UTF-8 in a name or a string
// attribute, which would make a collector reject the whole request, is
// sent as U+FFFD.
func TestAppendTracesInvalidUTF8(t *testing.T) {
	s := tracetest.SpanStub{Name: "bad\xffname", Attributes: []attribute.KeyValue{
		attribute.String("k", "v\xc3"), attribute.StringSlice("ks", []string{"\xfe"})}}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(AppendTraces(nil, []sdktrace.ReadOnlySpan{s.Snapshot()}), &got); err != nil {
		t.Fatal(err)
	}
	sp := got.ResourceSpans[0].ScopeSpans[0].Spans[0]
	if sp.Name != "bad\uFFFDname" || sp.Attributes[0].Value.GetStringValue() != "v\uFFFD" ||
		sp.Attributes[1].Value.GetArrayValue().Values[0].GetStringValue() != "\uFFFD" {
		t.Errorf("span %v", sp)
	}
}

// TestAppendTracesLargeMessages: length prefixes of one to three bytes
// (nested messages of up to 100 KB) decode.
func TestAppendTracesLargeMessages(t *testing.T) {
	for _, n := range []int{0, 100, 127, 128, 16383, 16384, 100000} {
		s := tracetest.SpanStub{Name: "big", Attributes: []attribute.KeyValue{attribute.String("k", strings.Repeat("x", n))}}
		var got coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(AppendTraces(nil, []sdktrace.ReadOnlySpan{s.Snapshot()}), &got); err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		if v := got.ResourceSpans[0].ScopeSpans[0].Spans[0].Attributes[0].Value.GetStringValue(); len(v) != n {
			t.Errorf("%d: got %d bytes", n, len(v))
		}
	}
}
