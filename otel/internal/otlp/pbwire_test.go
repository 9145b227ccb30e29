package otlp

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// varintCases are values at every varint length boundary.
func varintCases() []uint64 {
	vs := []uint64{0, 1, math.MaxUint64}
	for shift := 7; shift < 64; shift += 7 {
		vs = append(vs, 1<<shift-1, 1<<shift)
	}
	return vs
}

// TestPBAppendMatchesProtowire holds the encoders to
// google.golang.org/protobuf/encoding/protowire, which they replace.
func TestPBAppendMatchesProtowire(t *testing.T) {
	for _, v := range varintCases() {
		if got, want := pbAppendVarint(nil, v), protowire.AppendVarint(nil, v); !bytes.Equal(got, want) {
			t.Errorf("pbAppendVarint(%d) = %x, protowire %x", v, got, want)
		}
		if got, want := pbSizeVarint(v), protowire.SizeVarint(v); got != want {
			t.Errorf("pbSizeVarint(%d) = %d, protowire %d", v, got, want)
		}
		if got, want := pbAppendFixed64(nil, v), protowire.AppendFixed64(nil, v); !bytes.Equal(got, want) {
			t.Errorf("pbAppendFixed64(%d) = %x, protowire %x", v, got, want)
		}
		if got, want := pbAppendFixed32(nil, uint32(v)), protowire.AppendFixed32(nil, uint32(v)); !bytes.Equal(got, want) {
			t.Errorf("pbAppendFixed32(%d) = %x, protowire %x", uint32(v), got, want)
		}
		if got, want := pbEncodeZigZag(int64(v)), protowire.EncodeZigZag(int64(v)); got != want {
			t.Errorf("pbEncodeZigZag(%d) = %d, protowire %d", int64(v), got, want)
		}
	}
	for _, num := range []pbNumber{1, 15, 16, 2047, 2048, 1<<29 - 1} {
		for typ := pbType(0); typ < 8; typ++ {
			got := pbAppendTag(nil, num, typ)
			if want := protowire.AppendTag(nil, protowire.Number(num), protowire.Type(typ)); !bytes.Equal(got, want) {
				t.Errorf("pbAppendTag(%d, %d) = %x, protowire %x", num, typ, got, want)
			}
		}
	}
	for _, b := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte("y"), 300)} {
		if got, want := pbAppendBytes(nil, b), protowire.AppendBytes(nil, b); !bytes.Equal(got, want) {
			t.Errorf("pbAppendBytes(%d bytes) = %x, protowire %x", len(b), got, want)
		}
		if got, want := pbAppendString(nil, string(b)), protowire.AppendString(nil, string(b)); !bytes.Equal(got, want) {
			t.Errorf("pbAppendString(%d bytes) = %x, protowire %x", len(b), got, want)
		}
	}
	if pbEncodeBool(true) != protowire.EncodeBool(true) || pbEncodeBool(false) != protowire.EncodeBool(false) {
		t.Error("pbEncodeBool differs from protowire")
	}
}

// checkConsume compares the readers with protowire's on b: the same
// value and length, or both failing.
func checkConsume(t *testing.T, b []byte) {
	t.Helper()
	fail := func(n int) int { return max(n, -1) } // protowire's error codes are all negative
	v, n := pbConsumeVarint(b)
	wv, wn := protowire.ConsumeVarint(b)
	if fail(n) != fail(wn) || n >= 0 && v != wv {
		t.Errorf("pbConsumeVarint(%x) = %d, %d; protowire %d, %d", b, v, n, wv, wn)
	}
	num, typ, n := pbConsumeTag(b)
	wnum, wtyp, wn := protowire.ConsumeTag(b)
	if fail(n) != fail(wn) || n >= 0 && (int32(num) != int32(wnum) || int8(typ) != int8(wtyp)) {
		t.Errorf("pbConsumeTag(%x) = %d, %d, %d; protowire %d, %d, %d", b, num, typ, n, wnum, wtyp, wn)
	}
	if n >= 0 {
		m := pbConsumeFieldValue(num, typ, b[n:])
		wm := protowire.ConsumeFieldValue(wnum, wtyp, b[n:])
		if fail(m) != fail(wm) {
			t.Errorf("pbConsumeFieldValue(%d, %d, %x) = %d; protowire %d", num, typ, b[n:], m, wm)
		}
	}
	x32, n := pbConsumeFixed32(b)
	wx32, wn := protowire.ConsumeFixed32(b)
	if fail(n) != fail(wn) || n >= 0 && x32 != wx32 {
		t.Errorf("pbConsumeFixed32(%x) = %d, %d; protowire %d, %d", b, x32, n, wx32, wn)
	}
	x64, n := pbConsumeFixed64(b)
	wx64, wn := protowire.ConsumeFixed64(b)
	if fail(n) != fail(wn) || n >= 0 && x64 != wx64 {
		t.Errorf("pbConsumeFixed64(%x) = %d, %d; protowire %d, %d", b, x64, n, wx64, wn)
	}
	bs, n := pbConsumeBytes(b)
	wbs, wn := protowire.ConsumeBytes(b)
	if fail(n) != fail(wn) || n >= 0 && !bytes.Equal(bs, wbs) {
		t.Errorf("pbConsumeBytes(%x) = %x, %d; protowire %x, %d", b, bs, n, wbs, wn)
	}
}

// consumeCases are well-formed and malformed inputs of every kind.
func consumeCases() [][]byte {
	cases := [][]byte{nil, {0}, {0x80}, {0x08}, {0x08, 0x96, 0x01}, {0x12, 0x02, 'h', 'i'}, {0x12, 0x05, 'h'},
		{0x0b, 0x10, 0x01, 0x0c}, {0x0b, 0x10, 0x01, 0x14}, {0x0b, 0x0c}, {0x0c}, {0x0e, 1}, {0x0f},
		{0x09, 1, 2, 3, 4, 5, 6, 7, 8}, {0x0d, 1, 2, 3}, {0xf8, 0xff, 0xff, 0xff, 0x0f, 1}, {0xf8, 0xff, 0xff, 0xff, 0x1f, 1},
		bytes.Repeat([]byte{0xff}, 9), append(bytes.Repeat([]byte{0xff}, 9), 1), append(bytes.Repeat([]byte{0xff}, 9), 2),
		append(bytes.Repeat([]byte{0x80}, 10), 0)}
	for _, v := range varintCases() {
		cases = append(cases, protowire.AppendVarint(nil, v))
	}
	return cases
}

// TestPBConsumeMatchesProtowire holds the readers to protowire's.
func TestPBConsumeMatchesProtowire(t *testing.T) {
	for _, b := range consumeCases() {
		checkConsume(t, b)
	}
}

func FuzzPBConsume(f *testing.F) {
	for _, b := range consumeCases() {
		f.Add(b)
	}
	f.Fuzz(checkConsume)
}
