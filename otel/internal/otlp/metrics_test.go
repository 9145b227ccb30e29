package otlp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// collect records one measurement set on every kind of synchronous
// instrument of a MeterProvider with a ManualReader of selector, with
// exemplars always on and an exponential histogram view, and returns
// what the reader collects.
func collect(t *testing.T, selector sdkmetric.TemporalitySelector) *metricdata.ResourceMetrics {
	t.Helper()
	reader := sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(selector))
	res := resource.NewWithAttributes("https://schema/r", attribute.String("service.name", "svc"), attribute.Int64("pid", 7))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res),
		sdkmetric.WithExemplarFilter(exemplar.AlwaysOnFilter),
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "exp.*"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 20, MaxScale: 5}})))
	defer mp.Shutdown(context.Background())
	m := mp.Meter("scope", metric.WithInstrumentationVersion("v9"), metric.WithSchemaURL("https://schema/s"),
		metric.WithInstrumentationAttributes(attribute.String("scope.k", "v")))

	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	a := metric.WithAttributes(attribute.String("k", "a"), attribute.Bool("b", true))
	b := metric.WithAttributes(attribute.String("k", "b"))

	ic, _ := m.Int64Counter("int.counter", metric.WithUnit("{call}"), metric.WithDescription("an int counter"))
	ic.Add(ctx, 3, a)
	ic.Add(ctx, 0, b)
	fc, _ := m.Float64Counter("float.counter", metric.WithUnit("USD"))
	fc.Add(ctx, 0.25, a)
	ud, _ := m.Int64UpDownCounter("updown")
	ud.Add(ctx, -5, a)
	fud, _ := m.Float64UpDownCounter("fupdown")
	fud.Add(ctx, -0.5)
	ig, _ := m.Int64Gauge("int.gauge")
	ig.Record(ctx, -7, a)
	fg, _ := m.Float64Gauge("float.gauge")
	fg.Record(ctx, 0, a)
	ih, _ := m.Int64Histogram("int.hist", metric.WithExplicitBucketBoundaries(0, 10, 100))
	for _, v := range []int64{0, 5, 50, 500} {
		ih.Record(ctx, v, a)
	}
	fh, _ := m.Float64Histogram("float.hist", metric.WithUnit("s"))
	fh.Record(ctx, 0.003, b)
	fh.Record(ctx, 12.5, b)
	eh, _ := m.Float64Histogram("exp.hist")
	for _, v := range []float64{0, 0.5, 1, 2, 3, 1000} {
		eh.Record(ctx, v, a)
	}
	ieh, _ := m.Int64Histogram("exp.ihist")
	ieh.Record(ctx, 4, b)

	rm := &metricdata.ResourceMetrics{}
	if err := reader.Collect(context.Background(), rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// TestAppendMetricsRoundTrip: what the SDK collects, in both
// temporalities, comes back through the official generated types as
// written: every aggregation, data point, exemplar, bucket, extremum and
// temporality.
func TestAppendMetricsRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name     string
		selector sdkmetric.TemporalitySelector
		want     metricpb.AggregationTemporality
	}{
		{"cumulative", sdkmetric.CumulativeTemporalitySelector, metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE},
		{"delta", sdkmetric.DeltaTemporalitySelector, metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA},
	} {
		t.Run(c.name, func(t *testing.T) {
			rm := collect(t, c.selector)
			b, err := AppendMetrics(nil, rm)
			if err != nil {
				t.Fatal(err)
			}
			var got colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			want := &colmetricpb.ExportMetricsServiceRequest{ResourceMetrics: []*metricpb.ResourceMetrics{pbResourceMetrics(t, rm)}}
			if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
				t.Errorf("decoded request differs (-want +got):\n%s", diff)
			}
			// Literal checks, independent of pbResourceMetrics.
			ms := got.ResourceMetrics[0].ScopeMetrics[0].Metrics
			byName := map[string]*metricpb.Metric{}
			for _, m := range ms {
				byName[m.Name] = m
			}
			if len(byName) != 10 {
				t.Errorf("%d metrics, want 10: %v", len(byName), ms)
			}
			sum := byName["int.counter"].GetSum()
			if sum.GetAggregationTemporality() != c.want || !sum.GetIsMonotonic() || sum.DataPoints[0].GetExemplars() == nil {
				t.Errorf("int.counter: %v", sum)
			}
			if byName["updown"].GetSum().GetIsMonotonic() {
				t.Error("updown is monotonic")
			}
			h := byName["int.hist"].GetHistogram()
			if h.GetAggregationTemporality() != c.want || h.DataPoints[0].GetMin() != 0 || h.DataPoints[0].GetMax() != 500 ||
				h.DataPoints[0].Sum == nil || *h.DataPoints[0].Sum != 555 ||
				!cmp.Equal(h.DataPoints[0].BucketCounts, []uint64{1, 1, 1, 1}) {
				t.Errorf("int.hist: %v", h)
			}
			e := byName["exp.hist"].GetExponentialHistogram()
			if e.GetAggregationTemporality() != c.want || e.DataPoints[0].GetZeroCount() != 1 || e.DataPoints[0].GetPositive() == nil {
				t.Errorf("exp.hist: %v", e)
			}
			ex := byName["float.counter"].GetSum().DataPoints[0].Exemplars[0]
			if ex.GetAsDouble() != 0.25 || len(ex.TraceId) != 16 || len(ex.SpanId) != 8 {
				t.Errorf("exemplar %v", ex)
			}
		})
	}
}

// TestAppendMetricsSummaryAndErrors: a summary (the SDK makes none, but a
// bridge may) is encoded; an unknown aggregation or temporality is left
// out and named in an error while the rest is still encoded.
func TestAppendMetricsSummaryAndErrors(t *testing.T) {
	now := time.Unix(1700000000, 5)
	rm := &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "svc")),
		ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{
			{Name: "summary", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{
				Attributes: attribute.NewSet(attribute.String("k", "v")), StartTime: now, Time: now.Add(time.Second),
				Count: 3, Sum: 0, QuantileValues: []metricdata.QuantileValue{{Quantile: 0, Value: 1}, {Quantile: 0.5, Value: 2.5}},
			}}}},
			{Name: "weird", Data: weird{}},
			{Name: "no temporality", Data: metricdata.Sum[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}},
			{Name: "gauge", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 0}}}},
		}}},
	}
	b, err := AppendMetrics(nil, rm)
	if !errors.Is(err, ErrUnsupportedMetric) || !strings.Contains(err.Error(), `"weird"`) || !strings.Contains(err.Error(), `"no temporality"`) {
		t.Errorf("error %v, want one naming both unsupported metrics", err)
	}
	var got colmetricpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	kept := &metricdata.ResourceMetrics{Resource: rm.Resource, ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{
		rm.ScopeMetrics[0].Metrics[0], rm.ScopeMetrics[0].Metrics[3]}}}}
	want := &colmetricpb.ExportMetricsServiceRequest{ResourceMetrics: []*metricpb.ResourceMetrics{pbResourceMetrics(t, kept)}}
	if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("decoded request differs (-want +got):\n%s", diff)
	}
	q := got.ResourceMetrics[0].ScopeMetrics[0].Metrics[0].GetSummary().GetDataPoints()[0]
	if q.Count != 3 || len(q.QuantileValues) != 2 || q.QuantileValues[1].Value != 2.5 {
		t.Errorf("summary point %v", q)
	}
	if b, err := AppendMetrics(nil, nil); err != nil || len(b) != 0 {
		t.Errorf("nil: %x, %v", b, err)
	}
}

type weird struct{ metricdata.Summary }

func pbResourceMetrics(t *testing.T, rm *metricdata.ResourceMetrics) *metricpb.ResourceMetrics {
	out := &metricpb.ResourceMetrics{Resource: &resourcepb.Resource{}, SchemaUrl: rm.Resource.SchemaURL()}
	out.Resource = pbResource(rm.Resource)
	for _, sm := range rm.ScopeMetrics {
		psm := &metricpb.ScopeMetrics{Scope: pbScope(sm.Scope), SchemaUrl: sm.Scope.SchemaURL}
		for _, m := range sm.Metrics {
			psm.Metrics = append(psm.Metrics, pbMetric(t, m))
		}
		out.ScopeMetrics = append(out.ScopeMetrics, psm)
	}
	return out
}

func pbTemporality(t metricdata.Temporality) metricpb.AggregationTemporality {
	switch t {
	case metricdata.DeltaTemporality:
		return metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	case metricdata.CumulativeTemporality:
		return metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	}
	return 0
}

func pbMetric(t *testing.T, m metricdata.Metrics) *metricpb.Metric {
	out := &metricpb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Data = &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{DataPoints: pbNumberPoints(d.DataPoints)}}
	case metricdata.Gauge[float64]:
		out.Data = &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{DataPoints: pbNumberPoints(d.DataPoints)}}
	case metricdata.Sum[int64]:
		out.Data = &metricpb.Metric_Sum{Sum: &metricpb.Sum{DataPoints: pbNumberPoints(d.DataPoints),
			AggregationTemporality: pbTemporality(d.Temporality), IsMonotonic: d.IsMonotonic}}
	case metricdata.Sum[float64]:
		out.Data = &metricpb.Metric_Sum{Sum: &metricpb.Sum{DataPoints: pbNumberPoints(d.DataPoints),
			AggregationTemporality: pbTemporality(d.Temporality), IsMonotonic: d.IsMonotonic}}
	case metricdata.Histogram[int64]:
		out.Data = &metricpb.Metric_Histogram{Histogram: pbHistogram(d)}
	case metricdata.Histogram[float64]:
		out.Data = &metricpb.Metric_Histogram{Histogram: pbHistogram(d)}
	case metricdata.ExponentialHistogram[int64]:
		out.Data = &metricpb.Metric_ExponentialHistogram{ExponentialHistogram: pbExpHistogram(d)}
	case metricdata.ExponentialHistogram[float64]:
		out.Data = &metricpb.Metric_ExponentialHistogram{ExponentialHistogram: pbExpHistogram(d)}
	case metricdata.Summary:
		s := &metricpb.Summary{}
		for _, p := range d.DataPoints {
			sp := &metricpb.SummaryDataPoint{Attributes: pbKVs(p.Attributes.ToSlice()), StartTimeUnixNano: pbTime(p.StartTime),
				TimeUnixNano: pbTime(p.Time), Count: p.Count, Sum: p.Sum}
			for _, q := range p.QuantileValues {
				sp.QuantileValues = append(sp.QuantileValues, &metricpb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Quantile, Value: q.Value})
			}
			s.DataPoints = append(s.DataPoints, sp)
		}
		out.Data = &metricpb.Metric_Summary{Summary: s}
	default:
		t.Fatalf("unexpected data %T", d)
	}
	return out
}

func pbNumberPoints[N int64 | float64](pts []metricdata.DataPoint[N]) []*metricpb.NumberDataPoint {
	var out []*metricpb.NumberDataPoint
	for _, p := range pts {
		np := &metricpb.NumberDataPoint{Attributes: pbKVs(p.Attributes.ToSlice()), StartTimeUnixNano: pbTime(p.StartTime),
			TimeUnixNano: pbTime(p.Time), Exemplars: pbExemplars(p.Exemplars)}
		switch v := any(p.Value).(type) {
		case int64:
			np.Value = &metricpb.NumberDataPoint_AsInt{AsInt: v}
		case float64:
			np.Value = &metricpb.NumberDataPoint_AsDouble{AsDouble: v}
		}
		out = append(out, np)
	}
	return out
}

func pbExemplars[N int64 | float64](exs []metricdata.Exemplar[N]) []*metricpb.Exemplar {
	var out []*metricpb.Exemplar
	for _, e := range exs {
		pe := &metricpb.Exemplar{FilteredAttributes: pbKVs(e.FilteredAttributes), TimeUnixNano: pbTime(e.Time),
			SpanId: e.SpanID, TraceId: e.TraceID}
		switch v := any(e.Value).(type) {
		case int64:
			pe.Value = &metricpb.Exemplar_AsInt{AsInt: v}
		case float64:
			pe.Value = &metricpb.Exemplar_AsDouble{AsDouble: v}
		}
		out = append(out, pe)
	}
	return out
}

func extremum[N int64 | float64](e metricdata.Extrema[N]) *float64 {
	if v, ok := e.Value(); ok {
		f := float64(v)
		return &f
	}
	return nil
}

func pbHistogram[N int64 | float64](h metricdata.Histogram[N]) *metricpb.Histogram {
	out := &metricpb.Histogram{AggregationTemporality: pbTemporality(h.Temporality)}
	for _, p := range h.DataPoints {
		sum := float64(p.Sum)
		out.DataPoints = append(out.DataPoints, &metricpb.HistogramDataPoint{Attributes: pbKVs(p.Attributes.ToSlice()),
			StartTimeUnixNano: pbTime(p.StartTime), TimeUnixNano: pbTime(p.Time), Count: p.Count, Sum: &sum,
			BucketCounts: p.BucketCounts, ExplicitBounds: p.Bounds, Exemplars: pbExemplars(p.Exemplars),
			Min: extremum(p.Min), Max: extremum(p.Max)})
	}
	return out
}

func pbExpHistogram[N int64 | float64](h metricdata.ExponentialHistogram[N]) *metricpb.ExponentialHistogram {
	out := &metricpb.ExponentialHistogram{AggregationTemporality: pbTemporality(h.Temporality)}
	for _, p := range h.DataPoints {
		sum := float64(p.Sum)
		out.DataPoints = append(out.DataPoints, &metricpb.ExponentialHistogramDataPoint{Attributes: pbKVs(p.Attributes.ToSlice()),
			StartTimeUnixNano: pbTime(p.StartTime), TimeUnixNano: pbTime(p.Time), Count: p.Count, Sum: &sum,
			Scale: p.Scale, ZeroCount: p.ZeroCount, ZeroThreshold: p.ZeroThreshold,
			Positive:  &metricpb.ExponentialHistogramDataPoint_Buckets{Offset: p.PositiveBucket.Offset, BucketCounts: p.PositiveBucket.Counts},
			Negative:  &metricpb.ExponentialHistogramDataPoint_Buckets{Offset: p.NegativeBucket.Offset, BucketCounts: p.NegativeBucket.Counts},
			Exemplars: pbExemplars(p.Exemplars), Min: extremum(p.Min), Max: extremum(p.Max)})
	}
	return out
}
