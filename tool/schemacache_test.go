package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompileSchemaShared: the same schema text compiles once and every
// caller gets the same *Schema; the cache keeps its own copy of the text.
func TestCompileSchemaShared(t *testing.T) {
	buf := []byte(editSchema)
	a, err := CompileSchema(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = ' ' // the caller reuses its buffer
	}
	b, err := CompileSchema(json.RawMessage(editSchema))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same schema text compiled twice")
	}
	if diff := cmp.Diff(editSchema, string(b.Raw())); diff != "" {
		t.Errorf("Raw after the caller's buffer changed (-want +got):\n%s", diff)
	}
}

// TestSchemaCacheBounded feeds a small cache more distinct schemas than
// it may hold: it stays within its bounds, never caches a failure or an
// oversized schema, and every answer is still right.
func TestSchemaCacheBounded(t *testing.T) {
	schema := func(i int, pad int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"object","description":%q,"properties":{"p%d":{"type":"string"}},"required":["p%d"]}`,
			strings.Repeat("x", pad), i, i))
	}
	size := len(schema(100, 10))
	cases := []struct {
		name       string
		maxEntries int
		maxBytes   int
		maxSchema  int
		feed       []json.RawMessage
		wantCount  int
		wantErrs   int
	}{
		{name: "count bound", maxEntries: 4, maxBytes: 1 << 20, maxSchema: 1 << 10,
			feed: seq(20, func(i int) json.RawMessage { return schema(100+i, 10) }), wantCount: 4},
		{name: "byte bound", maxEntries: 100, maxBytes: 3 * size, maxSchema: 1 << 10,
			feed: seq(20, func(i int) json.RawMessage { return schema(100+i, 10) }), wantCount: 3},
		{name: "oversized schemas are not kept", maxEntries: 100, maxBytes: 1 << 20, maxSchema: 64,
			feed: seq(5, func(i int) json.RawMessage { return schema(100+i, 100) }), wantCount: 0},
		{name: "failures are not kept", maxEntries: 100, maxBytes: 1 << 20, maxSchema: 1 << 10,
			feed: seq(5, func(i int) json.RawMessage {
				return json.RawMessage(fmt.Sprintf(`{"type":"string","description":"%d"}`, i))
			}), wantCount: 0, wantErrs: 5},
		{name: "repeats hit", maxEntries: 100, maxBytes: 1 << 20, maxSchema: 1 << 10,
			feed: seq(30, func(i int) json.RawMessage { return schema(100+i%3, 10) }), wantCount: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newSchemaCache(tc.maxEntries, tc.maxBytes, tc.maxSchema)
			errs := 0
			for _, raw := range tc.feed {
				s, err := c.get(raw)
				if err != nil {
					if !errors.Is(err, ErrInvalidSchema) {
						t.Fatalf("error %v, want ErrInvalidSchema", err)
					}
					errs++
					continue
				}
				if string(s.Raw()) != string(raw) {
					t.Fatalf("got the schema of %s for %s", s.Raw(), raw)
				}
				if n, b := c.len(); n > tc.maxEntries || b > tc.maxBytes {
					t.Fatalf("cache holds %d schemas, %d bytes; bounds %d, %d", n, b, tc.maxEntries, tc.maxBytes)
				}
			}
			n, _ := c.len()
			if diff := cmp.Diff([2]int{tc.wantCount, tc.wantErrs}, [2]int{n, errs}); diff != "" {
				t.Errorf("[cached, errors] (-want +got):\n%s", diff)
			}
		})
	}
}

func seq(n int, f func(int) json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestSharedSchemaConcurrentValidate validates through one shared schema
// from many goroutines, with defaults applied and errors reported; under
// -race it shows Validate does not write the schema.
func TestSharedSchemaConcurrentValidate(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(editSchema))
	if err != nil {
		t.Fatal(err)
	}
	inputs := []struct{ in, want string }{
		{`{"file_path":"/a","old_string":"x","new_string":"y"}`, `{"replace_all":false,"file_path":"/a","old_string":"x","new_string":"y"}`},
		{`{"file_path":"/a","old_string":"x"}`, "InputValidationError"},
		{`{"file_path":1,"old_string":"x","new_string":"y","extra":true}`, "InputValidationError"},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				c := inputs[(g+i)%len(inputs)]
				out, err := s.Validate("Edit", json.RawMessage(c.in))
				got := string(out)
				if err != nil {
					got = err.Error()
				}
				if !strings.HasPrefix(got, c.want) {
					t.Errorf("Validate(%s) = %q, want prefix %q", c.in, got, c.want)
					return
				}
			}
		})
	}
	wg.Wait()
}
