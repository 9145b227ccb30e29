package otlp

import (
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// ErrUnsupportedMetric is wrapped by AppendMetrics's error for metric data
// it cannot encode (an aggregation type or a temporality OTLP has no
// encoding for here).
var ErrUnsupportedMetric = errors.New("otlp: unsupported metric data")

// AppendMetrics appends to b the protobuf encoding of an
// ExportMetricsServiceRequest holding rm (one ResourceMetrics), and returns
// the extended buffer. Gauges, sums, histograms, exponential histograms
// and summaries of int64 and float64 are encoded with their data points,
// exemplars, temporality, monotonicity, counts, sums, buckets, minima and
// maxima. A metric whose data has another type, or an unknown
// temporality, is left out and named in the error (wrapping
// ErrUnsupportedMetric); the rest is still encoded, so a caller may send
// it and report the error. A nil rm appends an empty request.
func AppendMetrics(b []byte, rm *metricdata.ResourceMetrics) ([]byte, error) {
	if rm == nil {
		return b, nil
	}
	var errs []error
	// ResourceMetrics: resource = 1, scope_metrics = 2, schema_url = 3.
	b = appendMessage(b, 1, func(b []byte) []byte {
		b = appendResource(b, 1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			// ScopeMetrics: scope = 1, metrics = 2, schema_url = 3.
			b = appendMessage(b, 2, func(b []byte) []byte {
				b = appendScope(b, 1, sm.Scope)
				for _, m := range sm.Metrics {
					if err := checkMetric(m); err != nil {
						errs = append(errs, err)
						continue
					}
					b = appendMessage(b, 2, func(b []byte) []byte { return appendMetric(b, m) })
				}
				return appendString(b, 3, sm.Scope.SchemaURL)
			})
		}
		if rm.Resource != nil {
			b = appendString(b, 3, rm.Resource.SchemaURL())
		}
		return b
	})
	return b, errors.Join(errs...)
}

// checkMetric reports whether appendMetric can encode m.
func checkMetric(m metricdata.Metrics) error {
	var t metricdata.Temporality
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64], metricdata.Gauge[float64], metricdata.Summary:
		return nil
	case metricdata.Sum[int64]:
		t = d.Temporality
	case metricdata.Sum[float64]:
		t = d.Temporality
	case metricdata.Histogram[int64]:
		t = d.Temporality
	case metricdata.Histogram[float64]:
		t = d.Temporality
	case metricdata.ExponentialHistogram[int64]:
		t = d.Temporality
	case metricdata.ExponentialHistogram[float64]:
		t = d.Temporality
	default:
		return fmt.Errorf("%w: metric %q has data of type %T", ErrUnsupportedMetric, m.Name, m.Data)
	}
	if temporality(t) == 0 {
		return fmt.Errorf("%w: metric %q has temporality %v", ErrUnsupportedMetric, m.Name, t)
	}
	return nil
}

// temporality maps metricdata.Temporality to OTLP's
// AggregationTemporality: DELTA = 1, CUMULATIVE = 2, else 0 (unspecified).
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// appendMetric appends the fields of a Metric (metrics/v1): name = 1,
// description = 2, unit = 3, and the data in its oneof member: gauge = 5,
// sum = 7, histogram = 9, exponential_histogram = 10, summary = 11.
// checkMetric has accepted m.
func appendMetric(b []byte, m metricdata.Metrics) []byte {
	b = appendString(b, 1, m.Name)
	b = appendString(b, 2, m.Description)
	b = appendString(b, 3, m.Unit)
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		return appendMessage(b, 5, func(b []byte) []byte { return appendNumberPoints(b, d.DataPoints) })
	case metricdata.Gauge[float64]:
		return appendMessage(b, 5, func(b []byte) []byte { return appendNumberPoints(b, d.DataPoints) })
	case metricdata.Sum[int64]:
		return appendMessage(b, 7, func(b []byte) []byte { return appendSum(b, d) })
	case metricdata.Sum[float64]:
		return appendMessage(b, 7, func(b []byte) []byte { return appendSum(b, d) })
	case metricdata.Histogram[int64]:
		return appendMessage(b, 9, func(b []byte) []byte { return appendHistogram(b, d) })
	case metricdata.Histogram[float64]:
		return appendMessage(b, 9, func(b []byte) []byte { return appendHistogram(b, d) })
	case metricdata.ExponentialHistogram[int64]:
		return appendMessage(b, 10, func(b []byte) []byte { return appendExpHistogram(b, d) })
	case metricdata.ExponentialHistogram[float64]:
		return appendMessage(b, 10, func(b []byte) []byte { return appendExpHistogram(b, d) })
	case metricdata.Summary:
		return appendMessage(b, 11, func(b []byte) []byte { return appendSummary(b, d) })
	}
	return b
}

// appendSum appends a Sum: data_points = 1, aggregation_temporality = 2,
// is_monotonic = 3.
func appendSum[N int64 | float64](b []byte, s metricdata.Sum[N]) []byte {
	b = appendNumberPoints(b, s.DataPoints)
	b = appendVarint(b, 2, temporality(s.Temporality))
	return appendVarint(b, 3, pbEncodeBool(s.IsMonotonic))
}

// appendNumberPoints appends NumberDataPoints as field 1 (data_points of
// Gauge and Sum): start_time_unix_nano = 2, time_unix_nano = 3, as_double
// = 4 or as_int = 6, exemplars = 5, attributes = 7 (flags = 8 stays 0).
func appendNumberPoints[N int64 | float64](b []byte, pts []metricdata.DataPoint[N]) []byte {
	for _, p := range pts {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendFixed64(b, 2, unixNanos(p.StartTime))
			b = appendFixed64(b, 3, unixNanos(p.Time))
			b = appendNumber(b, 4, 6, p.Value)
			b = appendExemplars(b, 5, p.Exemplars)
			return appendSet(b, 7, &p.Attributes)
		})
	}
	return b
}

// appendNumber appends v in the oneof member for doubles (dbl, fixed64)
// or for integers (integer, sfixed64), whatever its value.
func appendNumber[N int64 | float64](b []byte, dbl, integer pbNumber, v N) []byte {
	switch x := any(v).(type) {
	case float64:
		return appendDouble(b, dbl, x)
	case int64:
		b = pbAppendTag(b, integer, pbFixed64Type)
		return pbAppendFixed64(b, uint64(x))
	}
	return b
}

// appendExemplars appends Exemplars (metrics/v1) as field num:
// time_unix_nano = 2, as_double = 3 or as_int = 6, span_id = 4,
// trace_id = 5, filtered_attributes = 7.
func appendExemplars[N int64 | float64](b []byte, num pbNumber, exs []metricdata.Exemplar[N]) []byte {
	for _, e := range exs {
		b = appendMessage(b, num, func(b []byte) []byte {
			b = appendFixed64(b, 2, unixNanos(e.Time))
			b = appendNumber(b, 3, 6, e.Value)
			b = appendBytes(b, 4, e.SpanID)
			b = appendBytes(b, 5, e.TraceID)
			return appendKeyValues(b, 7, e.FilteredAttributes)
		})
	}
	return b
}

// appendHistogram appends a Histogram: data_points = 1,
// aggregation_temporality = 2. Each HistogramDataPoint has
// start_time_unix_nano = 2, time_unix_nano = 3, count = 4, sum = 5
// (always written), bucket_counts = 6 and explicit_bounds = 7 (packed),
// exemplars = 8, attributes = 9, min = 11 and max = 12 (when the SDK
// recorded them); flags = 10 stays 0.
func appendHistogram[N int64 | float64](b []byte, h metricdata.Histogram[N]) []byte {
	for _, p := range h.DataPoints {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendFixed64(b, 2, unixNanos(p.StartTime))
			b = appendFixed64(b, 3, unixNanos(p.Time))
			b = appendFixed64(b, 4, p.Count)
			b = appendDouble(b, 5, float64(p.Sum))
			b = appendPackedFixed64(b, 6, p.BucketCounts)
			b = appendPackedDouble(b, 7, p.Bounds)
			b = appendExemplars(b, 8, p.Exemplars)
			b = appendSet(b, 9, &p.Attributes)
			b = appendExtrema(b, 11, p.Min)
			return appendExtrema(b, 12, p.Max)
		})
	}
	return appendVarint(b, 2, temporality(h.Temporality))
}

// appendExpHistogram appends an ExponentialHistogram: data_points = 1,
// aggregation_temporality = 2. Each ExponentialHistogramDataPoint has
// attributes = 1, start_time_unix_nano = 2, time_unix_nano = 3, count =
// 4, sum = 5 (always written), scale = 6 (sint32), zero_count = 7,
// positive = 8 and negative = 9 (Buckets: offset = 1 as sint32,
// bucket_counts = 2 packed varints; always written), exemplars = 11, min
// = 12, max = 13, zero_threshold = 14; flags = 10 stays 0.
func appendExpHistogram[N int64 | float64](b []byte, h metricdata.ExponentialHistogram[N]) []byte {
	for _, p := range h.DataPoints {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendSet(b, 1, &p.Attributes)
			b = appendFixed64(b, 2, unixNanos(p.StartTime))
			b = appendFixed64(b, 3, unixNanos(p.Time))
			b = appendFixed64(b, 4, p.Count)
			b = appendDouble(b, 5, float64(p.Sum))
			b = appendVarint(b, 6, pbEncodeZigZag(int64(p.Scale)))
			b = appendFixed64(b, 7, p.ZeroCount)
			b = appendMessage(b, 8, func(b []byte) []byte { return appendExpBuckets(b, p.PositiveBucket) })
			b = appendMessage(b, 9, func(b []byte) []byte { return appendExpBuckets(b, p.NegativeBucket) })
			b = appendExemplars(b, 11, p.Exemplars)
			b = appendExtrema(b, 12, p.Min)
			b = appendExtrema(b, 13, p.Max)
			if p.ZeroThreshold != 0 {
				b = appendDouble(b, 14, p.ZeroThreshold)
			}
			return b
		})
	}
	return appendVarint(b, 2, temporality(h.Temporality))
}

func appendExpBuckets(b []byte, bk metricdata.ExponentialBucket) []byte {
	b = appendVarint(b, 1, pbEncodeZigZag(int64(bk.Offset)))
	if len(bk.Counts) == 0 {
		return b
	}
	return appendMessage(b, 2, func(b []byte) []byte {
		for _, c := range bk.Counts {
			b = pbAppendVarint(b, c)
		}
		return b
	})
}

// appendSummary appends a Summary: data_points = 1. Each SummaryDataPoint
// has start_time_unix_nano = 2, time_unix_nano = 3, count = 4, sum = 5,
// quantile_values = 6 (quantile = 1, value = 2), attributes = 7; flags =
// 8 stays 0.
func appendSummary(b []byte, s metricdata.Summary) []byte {
	for _, p := range s.DataPoints {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendFixed64(b, 2, unixNanos(p.StartTime))
			b = appendFixed64(b, 3, unixNanos(p.Time))
			b = appendFixed64(b, 4, p.Count)
			b = appendFixed64(b, 5, math.Float64bits(p.Sum))
			for _, q := range p.QuantileValues {
				b = appendMessage(b, 6, func(b []byte) []byte {
					b = appendFixed64(b, 1, math.Float64bits(q.Quantile))
					return appendFixed64(b, 2, math.Float64bits(q.Value))
				})
			}
			return appendSet(b, 7, &p.Attributes)
		})
	}
	return b
}

// appendExtrema appends a min or max (optional double) when defined.
func appendExtrema[N int64 | float64](b []byte, num pbNumber, e metricdata.Extrema[N]) []byte {
	if v, ok := e.Value(); ok {
		b = appendDouble(b, num, float64(v))
	}
	return b
}

// appendPackedFixed64 appends a packed repeated fixed64 field, omitting
// an empty one.
func appendPackedFixed64(b []byte, num pbNumber, vs []uint64) []byte {
	return appendPacked64(b, num, vs, func(v uint64) uint64 { return v })
}

// appendPackedDouble appends a packed repeated double field, omitting an
// empty one.
func appendPackedDouble(b []byte, num pbNumber, vs []float64) []byte {
	return appendPacked64(b, num, vs, math.Float64bits)
}

// appendPacked64 appends a packed repeated field of 8-byte values, each
// written as bits gives it, omitting an empty one.
func appendPacked64[T any](b []byte, num pbNumber, vs []T, bits func(T) uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	b = pbAppendTag(b, num, pbBytesType)
	b = pbAppendVarint(b, uint64(8*len(vs)))
	for _, v := range vs {
		b = pbAppendFixed64(b, bits(v))
	}
	return b
}
