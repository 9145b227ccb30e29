package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

var values = []string{
	`"plain"`, `"esc \" quote"`, `"back\\\\"`, `"\\\""`, `{}`, `[]`, `{"a":[1,{"b":"}]"}],"c":null}`,
	`[["]"],"\\"]`, `12.5e-3`, `true`, `false`, `null`, `-0`,
}

// TestValueEnd checks that each value is delimited exactly, followed by
// the punctuation that can follow a value.
func TestValueEnd(t *testing.T) {
	for _, v := range values {
		for _, tail := range []string{"", ",", "}", "]", " x"} {
			b := []byte(v + tail)
			end, ok := ValueEnd(b, 0)
			if !ok || end != len(v) {
				t.Errorf("ValueEnd(%q) = %d, %v; want %d", b, end, ok, len(v))
			}
		}
	}
	for _, bad := range []string{``, `"open`, `{"a":1`, `[[]`, `"\"`} {
		if end, ok := ValueEnd([]byte(bad), 0); ok {
			t.Errorf("ValueEnd(%q) = %d, true; want false", bad, end)
		}
	}
}

// FuzzValueEnd checks ValueEnd against encoding/json: the value of a
// valid document ends where the document's white space begins.
func FuzzValueEnd(f *testing.F) {
	for _, v := range values {
		f.Add([]byte(" " + v + " "))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		i := SkipSpace(b, 0)
		end, ok := ValueEnd(b, i)
		want := len(bytes.TrimRight(b, " \t\r\n"))
		if !ok || end != want {
			t.Fatalf("ValueEnd(%q, %d) = %d, %v; want %d", b, i, end, ok, want)
		}
	})
}
