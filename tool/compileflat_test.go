package tool

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// flatSeeds are schemas for FuzzCompileFlat to start from: flat ones of
// every keyword compileFlat takes, and near misses it must refuse or the
// general validator must accept.
var flatSeeds = []string{
	`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"number","minimum":0,"maximum":10,"description":"d"}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}`,
	`{"type":"object","title":"t","description":"d","properties":{"e":{"type":"string","enum":["a","b"],"default":"a","examples":["a"],"title":"x"}}}`,
	`{"type":"object","properties":{"e":{"type":"string","enum":[]}}}`,
	`{"type":"object","properties":{"i":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":5}},"required":["i","i"]}`,
	`{"type":"object","properties":{"b":{"type":"boolean","examples":true}}}`,
	`{"type":"object","properties":{"b":{"type":"boolean","description":1}}}`,
	`{"type":"object","required":[1]}`,
	`{"type":"object","required":"a"}`,
	`{"type":"object","title":2}`,
	`{"type":"object","description":["d"]}`,
	`{"properties":{"x":{"type":"string","default":3}}}`,
	`{}`,
	`{"type":"object","properties":{"x":{"type":"number","minimum":1e308,"maximum":-1e308}}}`,
	`{"type":"object","properties":{"x":{"type":"string","title":""}},"required":[]}`,
}

// FuzzCompileFlat: a schema compileFlat takes is one the general
// validator (jsonschema-go) takes too, and compileFlat reads it as
// compileGeneral does: the same properties and types, required list,
// closedness and flat form; its deferred general form resolves.
func FuzzCompileFlat(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var generic any
		if json.Unmarshal(raw, &generic) != nil {
			return
		}
		fast := compileFlat(raw, generic)
		if fast == nil {
			return
		}
		slow, err := compileGeneral(raw)
		if err != nil {
			t.Fatalf("compileFlat took %s, which the general validator refuses: %v", raw, err)
		}
		if _, err := fast.general(); err != nil {
			t.Fatalf("the deferred general form of %s: %v", raw, err)
		}
		type view struct {
			Props    map[string]string
			Required []string
			Closed   bool
			Flat     *flatSchema
		}
		got := view{fast.props, fast.required, fast.closed, fast.flat}
		want := view{slow.props, slow.required, slow.closed, slow.flat}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(flatSchema{}, flatProp{}), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("compileFlat(%s) differs from compileGeneral (-general +flat):\n%s", raw, d)
		}
	})
}

// TestCompileFlatRefuses: what compileFlat leaves to the general path.
func TestCompileFlatRefuses(t *testing.T) {
	for _, raw := range []string{
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}`,
		`{"type":"object","properties":{"e":{"type":"string","enum":[]}}}`,
		`{"type":"object","properties":{"b":{"type":"boolean","examples":true}}}`,
		`{"type":"object","properties":{"b":{"type":"boolean","description":1}}}`,
		`{"type":"object","required":[1]}`,
		`{"type":"object","required":"a"}`,
		`{"type":"object","properties":{"i":{"type":"integer"}},"required":["i","i"]}`,
		`{"type":"object","title":2}`,
		`{"type":"object","properties":{"o":{"type":"object"}}}`,
	} {
		if TakesFlatPath(json.RawMessage(raw)) {
			t.Errorf("compileFlat took %s", raw)
		}
	}
}

// TestDeferredGeneralForm: a schema compiled on the flat path validates
// an input its flat checks cannot vouch for (out of bounds, a default to
// fill) with the general validator, resolved then, as a schema compiled
// on the general path does.
func TestDeferredGeneralForm(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","minimum":1},"m":{"type":"string","default":"x"}},"required":["n"],"additionalProperties":false}`)
	if !TakesFlatPath(raw) {
		t.Fatal("the schema does not take the flat path")
	}
	fast, _ := compileSchema(raw)
	slow, err := compileGeneral(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{"n":0}`, `{"n":2}`, `{"n":2,"m":"y"}`, `{"m":"y"}`, `{"n":"2"}`, `{"n":2,"z":1}`} {
		got, gotErr := fast.Validate("T", json.RawMessage(in))
		want, wantErr := slow.Validate("T", json.RawMessage(in))
		if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("Validate(%s): flat path %s, %v; general path %s, %v", in, got, gotErr, want, wantErr)
		}
	}
}
