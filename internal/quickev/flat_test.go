package quickev

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readFlat decodes data with ReadFlatObject and FlatValue into the two
// forms the callers make: an interface map and a raw map.
func readFlat(data []byte) (map[string]any, map[string]json.RawMessage, bool) {
	values, raws := map[string]any{}, map[string]json.RawMessage{}
	ok := ReadFlatObject(data, func(k string, v []byte) bool {
		x, ok := FlatValue(v)
		if !ok {
			return false
		}
		values[k], raws[k] = x, bytes.Clone(v)
		return true
	})
	return values, raws, ok
}

// FuzzReadFlatObject checks the flat reader against encoding/json:
// whatever it reads, encoding/json reads the same, into an interface map
// and into a raw map alike.
func FuzzReadFlatObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"file_path":"/tmp/a"}`, `{"file_path": "/tmp/a", "offset": 10, "limit": 2.5e3}`,
		`{"a":true,"b":false,"c":null}`, `{"a":1,"a":2}`, `{"a":-0.5E-3}`, `{"a":01}`, `{"a":1.}`,
		`{"a":"\u00e9"}`, `{"a":{"b":1}}`, `{"a":[1]}`, `{"a":1e999}`, `{"a":"x",}`, `{"a" "x"}`,
		"{\"a\":\"\xff\"}", `{"a":"tab\there"}`, `[]`, `{"a":1} x`, `{"a":-}`, `{"a":nul}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		values, raws, ok := readFlat(data)
		if !ok {
			return
		}
		var wantValues map[string]any
		if err := json.Unmarshal(data, &wantValues); err != nil {
			t.Fatalf("read %q, but encoding/json fails: %v", data, err)
		}
		if d := cmp.Diff(wantValues, values); d != "" {
			t.Fatalf("values of %q (-encoding/json +flat):\n%s", data, d)
		}
		var wantRaws map[string]json.RawMessage
		if err := json.Unmarshal(data, &wantRaws); err != nil {
			t.Fatalf("read %q, but encoding/json fails into raw values: %v", data, err)
		}
		if d := cmp.Diff(wantRaws, raws); d != "" {
			t.Fatalf("raw values of %q (-encoding/json +flat):\n%s", data, d)
		}
	})
}

func TestReadFlatObject(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want map[string]any
		ok   bool
	}{
		{`{"file_path": "/a/b.go", "offset": 3}`, map[string]any{"file_path": "/a/b.go", "offset": 3.0}, true},
		{` {} `, map[string]any{}, true},
		{`{"a":1,"a":"x"}`, map[string]any{"a": "x"}, true}, // the last, as encoding/json
		{`{"a":{"b":1}}`, nil, false},                       // nested: left to encoding/json
		{`{"a":"\u00e9"}`, nil, false},
		{`{"a":01}`, nil, false},
		{`{"a":1e999}`, nil, false},
		{`{"a":1} x`, nil, false},
	} {
		got, _, ok := readFlat([]byte(tt.in))
		if ok != tt.ok {
			t.Errorf("%s: ok %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if ok {
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("%s (-want +got):\n%s", tt.in, d)
			}
		}
	}
}
