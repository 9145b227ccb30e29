package otlp

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// The protobuf wire format, as far as the encoders and the reader of
// responses need it: tags, varints, fixed-size values and length-delimited
// bytes. It is written here rather than taken from
// google.golang.org/protobuf/encoding/protowire, whose package and the two
// it imports run code when any process that links them starts (the
// exporter is linked into the CLI, which most runs use without it).

// pbNumber is a field number.
type pbNumber int32

// pbType is a wire type.
type pbType int8

// The wire types.
const (
	pbVarintType     pbType = 0
	pbFixed64Type    pbType = 1
	pbBytesType      pbType = 2
	pbStartGroupType pbType = 3
	pbEndGroupType   pbType = 4
	pbFixed32Type    pbType = 5
)

// errMalformed is the error of a message that does not parse.
var errMalformed = errors.New("malformed protobuf message")

// pbAppendTag appends the key of field num of wire type typ.
func pbAppendTag(b []byte, num pbNumber, typ pbType) []byte {
	return pbAppendVarint(b, uint64(num)<<3|uint64(typ&7))
}

// pbAppendVarint appends v as a varint: seven bits a byte, the low ones
// first, each byte but the last with its high bit set.
func pbAppendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// pbSizeVarint is the length of v as a varint, 1 to 10 bytes.
func pbSizeVarint(v uint64) int {
	return max(1, (bits.Len64(v)+6)/7)
}

// pbAppendFixed32 appends v in four bytes, little-endian.
func pbAppendFixed32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// pbAppendFixed64 appends v in eight bytes, little-endian.
func pbAppendFixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// pbAppendBytes appends v prefixed with its length.
func pbAppendBytes(b []byte, v []byte) []byte {
	return append(pbAppendVarint(b, uint64(len(v))), v...)
}

// pbAppendString appends v prefixed with its length.
func pbAppendString(b []byte, v string) []byte {
	return append(pbAppendVarint(b, uint64(len(v))), v...)
}

// pbEncodeZigZag maps a signed integer to the varint of an sint field:
// 0, -1, 1, -2, … to 0, 1, 2, 3, ….
func pbEncodeZigZag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// pbEncodeBool is the varint of a bool.
func pbEncodeBool(x bool) uint64 {
	if x {
		return 1
	}
	return 0
}

// The consume functions read one item at the start of b and return its
// length in bytes, or -1 when b does not start with a well-formed one.

// pbConsumeVarint reads a varint of at most ten bytes whose value fits in
// 64 bits.
func pbConsumeVarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, -1 // more than 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// pbConsumeTag reads a field's key: its number (at least 1, and an
// int32) and wire type.
func pbConsumeTag(b []byte) (pbNumber, pbType, int) {
	v, n := pbConsumeVarint(b)
	if n < 0 || v>>3 > math.MaxInt32 || v>>3 < 1 {
		return 0, 0, -1
	}
	return pbNumber(v >> 3), pbType(v & 7), n
}

// pbConsumeFixed32 reads four bytes, little-endian.
func pbConsumeFixed32(b []byte) (uint32, int) {
	if len(b) < 4 {
		return 0, -1
	}
	return binary.LittleEndian.Uint32(b), 4
}

// pbConsumeFixed64 reads eight bytes, little-endian.
func pbConsumeFixed64(b []byte) (uint64, int) {
	if len(b) < 8 {
		return 0, -1
	}
	return binary.LittleEndian.Uint64(b), 8
}

// pbConsumeBytes reads a length-prefixed value and returns it (a slice of
// b).
func pbConsumeBytes(b []byte) ([]byte, int) {
	size, n := pbConsumeVarint(b)
	if n < 0 || size > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(size)], n + int(size)
}

// pbMaxGroupDepth bounds the nesting of groups pbConsumeFieldValue
// follows.
const pbMaxGroupDepth = 10000

// pbConsumeFieldValue reads the value of field num, whose key (of wire
// type typ) was just read: for a group, everything up to and including
// its end-group key, which must name num.
func pbConsumeFieldValue(num pbNumber, typ pbType, b []byte) int {
	return pbConsumeValue(num, typ, b, pbMaxGroupDepth)
}

func pbConsumeValue(num pbNumber, typ pbType, b []byte, depth int) int {
	switch typ {
	case pbVarintType:
		_, n := pbConsumeVarint(b)
		return n
	case pbFixed32Type:
		_, n := pbConsumeFixed32(b)
		return n
	case pbFixed64Type:
		_, n := pbConsumeFixed64(b)
		return n
	case pbBytesType:
		_, n := pbConsumeBytes(b)
		return n
	case pbStartGroupType:
		if depth < 0 {
			return -1
		}
		for total := 0; ; {
			num2, typ2, n := pbConsumeTag(b[total:])
			if n < 0 {
				return -1
			}
			total += n
			if typ2 == pbEndGroupType {
				if num2 != num {
					return -1
				}
				return total
			}
			n = pbConsumeValue(num2, typ2, b[total:], depth-1)
			if n < 0 {
				return -1
			}
			total += n
		}
	}
	return -1 // an end-group key outside its group, or wire types 6 and 7
}
