package otlp

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// appendMessage appends field num as an embedded message whose contents
// fn appends. The length prefix is written after fn has run: one byte is
// reserved, and the contents are moved up when the length needs more.
// The field is written even when fn appends nothing (an empty message is
// present, not absent).
func appendMessage(b []byte, num pbNumber, fn func([]byte) []byte) []byte {
	b = pbAppendTag(b, num, pbBytesType)
	at := len(b)
	b = append(b, 0)
	b = fn(b)
	n := len(b) - at - 1
	size := pbSizeVarint(uint64(n))
	if size > 1 {
		b = append(b, make([]byte, size-1)...)
		copy(b[at+size:], b[at+1:at+1+n])
	}
	pbAppendVarint(b[:at], uint64(n))
	return b
}

// appendString appends a string field, omitting the empty string (the
// proto3 default). Invalid UTF-8, which decoders reject in a proto3
// string (failing the whole request), is replaced by U+FFFD.
func appendString(b []byte, num pbNumber, s string) []byte {
	if s == "" {
		return b
	}
	b = pbAppendTag(b, num, pbBytesType)
	return pbAppendString(b, validUTF8(s))
}

// validUTF8 is s with each run of invalid UTF-8 replaced by U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// appendBytes appends a bytes field, omitting an empty one.
func appendBytes(b []byte, num pbNumber, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = pbAppendTag(b, num, pbBytesType)
	return pbAppendBytes(b, v)
}

// appendVarint appends a varint field (uint32, uint64, int32, int64,
// bool or enum), omitting zero.
func appendVarint(b []byte, num pbNumber, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = pbAppendTag(b, num, pbVarintType)
	return pbAppendVarint(b, v)
}

// appendFixed64 appends a fixed64 field, omitting zero.
func appendFixed64(b []byte, num pbNumber, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = pbAppendTag(b, num, pbFixed64Type)
	return pbAppendFixed64(b, v)
}

// appendFixed32 appends a fixed32 field, omitting zero.
func appendFixed32(b []byte, num pbNumber, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = pbAppendTag(b, num, pbFixed32Type)
	return pbAppendFixed32(b, v)
}

// appendDouble appends a double field whatever its value: for fields
// with presence (optional, oneof members), where 0 is not "absent".
func appendDouble(b []byte, num pbNumber, v float64) []byte {
	b = pbAppendTag(b, num, pbFixed64Type)
	return pbAppendFixed64(b, math.Float64bits(v))
}

// unixNanos is t as OTLP's fixed64 time_unix_nano: 0 for times before
// 1970 (and for the zero time.Time).
func unixNanos(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(max(0, t.UnixNano()))
}

// clamp32 is a dropped count as OTLP's uint32.
func clamp32(n int) uint64 {
	return uint64(min(max(n, 0), math.MaxUint32))
}

// appendKeyValues appends each attribute as a KeyValue (common/v1) in
// field num.
func appendKeyValues(b []byte, num pbNumber, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, num, func(b []byte) []byte { return appendKeyValue(b, kv) })
	}
	return b
}

// appendSet appends the attributes of set as KeyValues in field num.
func appendSet(b []byte, num pbNumber, set *attribute.Set) []byte {
	for it := set.Iter(); it.Next(); {
		kv := it.Attribute()
		b = appendMessage(b, num, func(b []byte) []byte { return appendKeyValue(b, kv) })
	}
	return b
}

// appendKeyValue appends the fields of a KeyValue: key = 1, value = 2
// (an AnyValue, always present).
func appendKeyValue(b []byte, kv attribute.KeyValue) []byte {
	b = appendString(b, 1, string(kv.Key))
	return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
}

// AnyValue (common/v1) field numbers.
const (
	anyString = 1
	anyBool   = 2
	anyInt    = 3
	anyDouble = 4
	anyArray  = 5
	anyKVList = 6
	anyBytes  = 7
)

// appendAnyValue appends the fields of an AnyValue holding v: each scalar
// type in its oneof member (written even when zero, since a oneof member
// has presence), slices as an ArrayValue (values = 1), maps as a
// KeyValueList (values = 1), and nothing for an EMPTY value.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return appendAnyBool(b, v.AsBool())
	case attribute.INT64:
		return appendAnyInt(b, v.AsInt64())
	case attribute.FLOAT64:
		return appendDouble(b, anyDouble, v.AsFloat64())
	case attribute.STRING:
		return appendAnyString(b, v.AsString())
	case attribute.BYTESLICE:
		b = pbAppendTag(b, anyBytes, pbBytesType)
		return pbAppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendMessage(b, anyArray, func(b []byte) []byte {
			for _, x := range v.AsBoolSlice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyBool(b, x) })
			}
			return b
		})
	case attribute.INT64SLICE:
		return appendMessage(b, anyArray, func(b []byte) []byte {
			for _, x := range v.AsInt64Slice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyInt(b, x) })
			}
			return b
		})
	case attribute.FLOAT64SLICE:
		return appendMessage(b, anyArray, func(b []byte) []byte {
			for _, x := range v.AsFloat64Slice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendDouble(b, anyDouble, x) })
			}
			return b
		})
	case attribute.STRINGSLICE:
		return appendMessage(b, anyArray, func(b []byte) []byte {
			for _, x := range v.AsStringSlice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyString(b, x) })
			}
			return b
		})
	case attribute.SLICE:
		return appendMessage(b, anyArray, func(b []byte) []byte {
			for _, x := range v.AsSlice() {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyValue(b, x) })
			}
			return b
		})
	case attribute.MAP:
		return appendMessage(b, anyKVList, func(b []byte) []byte {
			return appendKeyValues(b, 1, v.AsMap())
		})
	}
	return b // EMPTY: an AnyValue with no member set
}

func appendAnyBool(b []byte, x bool) []byte {
	b = pbAppendTag(b, anyBool, pbVarintType)
	return pbAppendVarint(b, pbEncodeBool(x))
}

func appendAnyInt(b []byte, x int64) []byte {
	b = pbAppendTag(b, anyInt, pbVarintType)
	return pbAppendVarint(b, uint64(x))
}

func appendAnyString(b []byte, x string) []byte {
	b = pbAppendTag(b, anyString, pbBytesType)
	return pbAppendString(b, validUTF8(x))
}

// appendResource appends a Resource (resource/v1) as field num:
// attributes = 1 (dropped_attributes_count = 2 stays 0: the SDK's
// resources drop nothing). A nil resource is an empty one.
func appendResource(b []byte, num pbNumber, r *resource.Resource) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		if r == nil {
			return b
		}
		return appendSet(b, 1, r.Set())
	})
}

// appendScope appends an InstrumentationScope (common/v1) as field num:
// name = 1, version = 2, attributes = 3.
func appendScope(b []byte, num pbNumber, s instrumentation.Scope) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		b = appendString(b, 1, s.Name)
		b = appendString(b, 2, s.Version)
		return appendSet(b, 3, &s.Attributes)
	})
}
