package otlp

// Test-side conversions from SDK values to the official generated OTLP
// types: a second, independent statement of the mapping that the encoders
// are checked against (through proto.Unmarshal of their output).

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

func pbValue(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
	arr := func(vs []*commonpb.AnyValue) *commonpb.AnyValue_ArrayValue {
		return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}
	}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		var vs []*commonpb.AnyValue
		for _, x := range v.AsBoolSlice() {
			vs = append(vs, pbValue(attribute.BoolValue(x)))
		}
		av.Value = arr(vs)
	case attribute.INT64SLICE:
		var vs []*commonpb.AnyValue
		for _, x := range v.AsInt64Slice() {
			vs = append(vs, pbValue(attribute.Int64Value(x)))
		}
		av.Value = arr(vs)
	case attribute.FLOAT64SLICE:
		var vs []*commonpb.AnyValue
		for _, x := range v.AsFloat64Slice() {
			vs = append(vs, pbValue(attribute.Float64Value(x)))
		}
		av.Value = arr(vs)
	case attribute.STRINGSLICE:
		var vs []*commonpb.AnyValue
		for _, x := range v.AsStringSlice() {
			vs = append(vs, pbValue(attribute.StringValue(x)))
		}
		av.Value = arr(vs)
	case attribute.SLICE:
		var vs []*commonpb.AnyValue
		for _, x := range v.AsSlice() {
			vs = append(vs, pbValue(x))
		}
		av.Value = arr(vs)
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: pbKVs(v.AsMap())}}
	}
	return av
}

func pbKVs(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: pbValue(kv.Value)})
	}
	return out
}

func pbResource(r *resource.Resource) *resourcepb.Resource {
	return &resourcepb.Resource{Attributes: pbKVs(r.Attributes())}
}

func pbScope(s instrumentation.Scope) *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: s.Name, Version: s.Version, Attributes: pbKVs(s.Attributes.ToSlice())}
}

func pbTime(t time.Time) uint64 {
	if t.IsZero() || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

// everyAttribute has one attribute of each attribute.Type, zero values
// and nesting included.
func everyAttribute(prefix string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Bool(prefix+"bool", true),
		attribute.Bool(prefix+"false", false),
		attribute.Int64(prefix+"int", -42),
		attribute.Int64(prefix+"zero", 0),
		attribute.Float64(prefix+"float", 3.25),
		attribute.Float64(prefix+"float0", 0),
		attribute.String(prefix+"string", "héllo"),
		attribute.String(prefix+"empty", ""),
		attribute.BoolSlice(prefix+"bools", []bool{true, false}),
		attribute.Int64Slice(prefix+"ints", []int64{1, 0, -1 << 40}),
		attribute.Float64Slice(prefix+"floats", []float64{0.5, 0}),
		attribute.StringSlice(prefix+"strings", []string{"a", ""}),
		attribute.ByteSlice(prefix+"bytes", []byte{0, 1, 255}),
		attribute.Slice(prefix+"slice", attribute.IntValue(7), attribute.StringValue("x"), attribute.Value{}),
		attribute.Map(prefix+"map", attribute.String("inner", "v"), attribute.Int64Slice("n", []int64{2})),
		{Key: attribute.Key(prefix + "nothing")},
		attribute.String(prefix+"long", string(make([]byte, 300))),
	}
}
