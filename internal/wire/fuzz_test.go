package wire

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
)

// FuzzDecode: no line makes Decode panic; an error is a *DecodeError;
// a decoded line encodes, and encoding is stable from then on.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"spec_lines.jsonl", "more_lines.jsonl", "bad_lines.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for line := range bytes.Lines(b) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Decode(line)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		enc, err := Encode(m)
		if err != nil {
			t.Fatalf("%q decoded as %s but does not encode: %v", line, describe(m), err)
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("%q encoded as %q, which does not decode: %v", line, enc, err)
		}
		again, err := Encode(back)
		if err != nil || !bytes.Equal(enc, again) {
			t.Fatalf("%q: encoding not stable:\n%s%s (%v)", line, enc, again, err)
		}
	})
}

// FuzzReader: any input is read to its end without a panic, and reading
// it a byte at a time gives the same messages and errors as reading it
// whole.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"type\":\"keep_alive\"}\n\n{\"type\":\"user\"}\r\n"), 16)
	f.Add([]byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n{\"type\":\"keep_alive\"}"), 8)
	f.Fuzz(func(t *testing.T, input []byte, limit int) {
		limit = 1 + abs(limit)%256
		whole := readAll(t, NewReader(bytes.NewReader(input), limit))
		chunked := readAll(t, NewReader(iotest.OneByteReader(bytes.NewReader(input)), limit))
		if !slices.Equal(whole, chunked) {
			t.Fatalf("whole %q\nchunked %q", whole, chunked)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
