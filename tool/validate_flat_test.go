package tool

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// flatSchemas are schemas shaped as the built-in tools' are (bounds, an
// enum, a default, closed or open), and some that are not flat.
var flatSchemas = []struct {
	schema string
	flat   bool
}{
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{
		"file_path":{"description":"d","type":"string"},
		"offset":{"description":"d","type":"integer","minimum":0,"maximum":9007199254740991},
		"limit":{"description":"d","type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},
		"pages":{"type":"string"},"allow_large":{"type":"boolean"}},
		"required":["file_path"],"additionalProperties":false}`, true},
	{`{"type":"object","properties":{"pattern":{"type":"string"},
		"output_mode":{"type":"string","enum":["content","files_with_matches","count"]},
		"-A":{"type":"number","exclusiveMaximum":10.5},"head_limit":{"type":"number","minimum":-2.5}},
		"required":["pattern"]}`, true},
	{`{"type":"object","properties":{"file_path":{"type":"string"},"replace_all":{"default":false,"type":"boolean"}},
		"required":["file_path"],"additionalProperties":false}`, true},
	{`{"type":"object","properties":{"e":{"type":"string","enum":[]}}}`, true},
	{`{"type":"object"}`, true},
	// Not flat: the general validator alone.
	{`{"type":"object","properties":{"s":{"type":"string","minLength":2}}}`, false},
	{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`, false},
	{`{"type":"object","properties":{"a":{"type":"array"}}}`, false},
	{`{"type":"object","properties":{"u":{"type":["string","null"]}}}`, false},
	{`{"type":"object","properties":{"n":{"enum":[1,2]}}}`, false},
	{`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"integer"}}}}}`, false},
	{`{"type":"object","additionalProperties":{"type":"string"}}`, false},
}

// flatValues are property values to try: every JSON type, numbers on and
// around the bounds above, the enum's members and others.
var flatValues = []string{
	`"x"`, `"content"`, `"count"`, `"Count"`, `""`, `"<&>"`, `true`, `false`, `null`, `[]`, `["a"]`, `{}`, `{"x":1}`,
	`0`, `-0`, `1`, `-1`, `0.5`, `-2.5`, `-2.6`, `-2.4`, `10`, `10.5`, `10.49`, `10.51`, `1e308`, `-1e308`, `1.0`,
	`9007199254740991`, `9007199254740992`, `9007199254740993`, `9007199254740990.9`, `1e-320`, `2`,
}

var flatKeys = []string{"file_path", "offset", "limit", "pages", "allow_large", "pattern", "output_mode", "-A",
	"head_limit", "replace_all", "e", "s", "a", "u", "n", "o", "unknown"}

// slow returns s with the flat path turned off: the general validator's
// answer for every input.
func slow(s *Schema) *Schema {
	return &Schema{raw: s.raw, props: s.props, required: s.required, closed: s.closed}
}

// checkAgrees fails unless s answers input as it does without the flat
// path: the same input back, or an error both ways. (The flat path never
// words an error itself, it hands the input on; and the general
// validator's wording of several problems varies with map order.)
func checkAgrees(t *testing.T, s *Schema, input string) {
	t.Helper()
	got, gotErr := s.Validate("T", json.RawMessage(input))
	want, wantErr := slow(s).Validate("T", json.RawMessage(input))
	if (gotErr == nil) != (wantErr == nil) || string(got) != string(want) {
		t.Fatalf("Validate(%s):\nflat:    %s, %v\ngeneral: %s, %v", input, got, gotErr, want, wantErr)
	}
}

// TestFlatSchemaAgrees: on flat schemas the flat path answers every input
// as the general validator does (same input back, same error text), over
// random objects of the keys and values above; the schemas it should take
// for flat are, and the others are not.
func TestFlatSchemaAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i, tc := range flatSchemas {
		s, err := compileSchema(json.RawMessage(tc.schema))
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		if (s.flat != nil) != tc.flat {
			t.Errorf("schema %d flat = %v, want %v", i, s.flat != nil, tc.flat)
		}
		if !tc.flat {
			continue // the general validator alone, both ways
		}
		// Mostly the schema's own keys, its required ones given a
		// string (as they are in these schemas) half the time, so that
		// most inputs reach the bounds and the enum.
		keys := []string{"unknown"}
		for k := range s.props {
			keys = append(keys, k, k, k)
		}
		keys = append(keys, flatKeys...)
		for range 3000 {
			var parts []string
			if rng.IntN(2) == 0 {
				for _, r := range s.required {
					parts = append(parts, fmt.Sprintf("%q:%q", r, "v"))
				}
			}
			for range rng.IntN(4) {
				parts = append(parts, fmt.Sprintf("%q:%s", keys[rng.IntN(len(keys))], flatValues[rng.IntN(len(flatValues))]))
			}
			in := "{" + strings.Join(parts, ",") + "}"
			if rng.IntN(4) == 0 {
				in = "{ " + strings.Join(parts, ", ") + " }"
			}
			checkAgrees(t, s, in)
		}
	}
}

// TestFlatSchemaUsed: the flat path settles the common valid inputs
// itself (so it is taken at all), and leaves to the general validator
// those it cannot vouch for.
func TestFlatSchemaUsed(t *testing.T) {
	s, err := compileSchema(json.RawMessage(flatSchemas[0].schema))
	if err != nil {
		t.Fatal(err)
	}
	edit, err := compileSchema(json.RawMessage(flatSchemas[2].schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    *Schema
		in   string
		want bool
	}{
		{s, `{"file_path":"/a","offset":10,"limit":200}`, true},
		{s, `{"file_path":"/a","offset":0}`, true},
		{s, `{"file_path":"/a","limit":0}`, false},
		{s, `{"file_path":"/a","offset":-1}`, false},
		{edit, `{"file_path":"/a","replace_all":true}`, true},
		{edit, `{"file_path":"/a"}`, false}, // the default is to be applied
	} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(tc.in), &obj); err != nil {
			t.Fatal(err)
		}
		if got := tc.s.flat.valid(obj); got != tc.want {
			t.Errorf("flat.valid(%s) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func FuzzFlatSchemaAgrees(f *testing.F) {
	for _, v := range flatValues {
		f.Add(`{"file_path":"/a","offset":` + v + `}`)
		f.Add(`{"pattern":"p","output_mode":` + v + `,"-A":` + v + `}`)
	}
	var schemas []*Schema
	for _, tc := range flatSchemas[:4] {
		s, err := compileSchema(json.RawMessage(tc.schema))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		for _, s := range schemas {
			checkAgrees(t, s, input)
		}
	})
}

func BenchmarkValidateFlat(b *testing.B) {
	s, err := compileSchema(json.RawMessage(flatSchemas[0].schema))
	if err != nil {
		b.Fatal(err)
	}
	in := json.RawMessage(`{"file_path":"/tmp/project/internal/engine/stream.go","offset":10,"limit":200}`)
	for _, bc := range []struct {
		name string
		s    *Schema
	}{{"flat", s}, {"general", slow(s)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.s.Validate("Read", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
